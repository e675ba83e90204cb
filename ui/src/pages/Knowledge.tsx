// Skills and memories (docs/skills-and-memories.md): the namespace's skills with their files,
// and its memories with their text, each memory editable here (a PATCH of its text).

import { type FormEvent, useState } from 'react';
import { api, listError, q } from '../api';
import { usePoll } from '../hooks';
import { LIST_POLL_MS } from './Agents';

interface Skill {
  name: string;
  namespace: string;
  description: string;
  files: Record<string, string>;
}

interface Memory {
  name: string;
  namespace: string;
  text: string;
  description?: string;
  lastWriter?: string;
  lastWrittenAt?: string;
}

const byName = <T extends { name: string; namespace: string }>(a: T, b: T): number => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

export function KnowledgePage({ scope }: { scope: string }) {
  const ns = q({ namespace: scope || undefined });
  const skills = usePoll(() => api<{ skills: Skill[] }>('GET', `/api/v1/skills${ns}`), LIST_POLL_MS);
  const memories = usePoll(() => api<{ memories: Memory[] }>('GET', `/api/v1/memories${ns}`), LIST_POLL_MS);
  return (
    <div>
      <h1>Skills</h1>
      <p className="muted">Instruction packs the engine loads as its own skills, for the agents that attach them (spec.skills).</p>
      {listError(skills.error, scope) ? <p className="error">{listError(skills.error, scope)}</p> : null}
      {skills.data && !skills.data.skills.length ? <p className="muted">No skills.</p> : null}
      {(skills.data?.skills ?? []).sort(byName).map((s) => (
        <section key={`${s.namespace}/${s.name}`} className="card" data-skill={s.name}>
          <h2>
            {s.name} <small className="muted">in {s.namespace}</small>
          </h2>
          <p>{s.description}</p>
          <p className="muted">Files: {Object.keys(s.files).sort().join(', ')}</p>
        </section>
      ))}
      <h1>Memories</h1>
      <p className="muted">Text agents keep across tasks and share; each task starts with the text as it is then.</p>
      {listError(memories.error, scope) ? <p className="error">{listError(memories.error, scope)}</p> : null}
      {memories.data && !memories.data.memories.length ? <p className="muted">No memories.</p> : null}
      {(memories.data?.memories ?? []).sort(byName).map((m) => (
        <MemoryCard key={`${m.namespace}/${m.name}/${m.text}`} memory={m} onSaved={memories.refresh} />
      ))}
    </div>
  );
}

function MemoryCard({ memory: m, onSaved }: { memory: Memory; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(m.text);
  const [error, setError] = useState<string>();
  const save = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    try {
      await api('PATCH', `/api/v1/memories/${encodeURIComponent(m.name)}${q({ namespace: m.namespace })}`, { text: draft });
      setEditing(false);
      setError(undefined);
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section className="card" data-memory={m.name}>
      <h2>
        {m.name} <small className="muted">in {m.namespace}</small>
      </h2>
      {m.description ? <p>{m.description}</p> : null}
      {m.lastWriter ? <p className="muted">Last written by {m.lastWriter}</p> : null}
      {editing ? (
        <form onSubmit={(e) => void save(e)} aria-label={`Edit memory ${m.name}`}>
          <textarea name="text" rows={8} value={draft} onChange={(e) => setDraft(e.target.value)} />
          <button type="submit">Save</button>{' '}
          <button type="button" className="link" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <pre data-testid="memory-text">{m.text}</pre>
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        </>
      )}
      {error ? <p className="error">{error}</p> : null}
    </section>
  );
}
