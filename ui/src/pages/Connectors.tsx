// Connectors: their tool server, status, the agents attached and the tools they offer.

import { useEffect, useState } from 'react';
import { api, listError, q } from '../api';
import { href, usePoll } from '../hooks';
import type { Connector } from '../types';
import { LIST_POLL_MS } from './Agents';

export function ConnectorsPage({ scope }: { scope: string }) {
  const list = usePoll(() => api<{ connectors: Connector[] }>('GET', `/api/v1/connectors${q({ namespace: scope || undefined })}`), LIST_POLL_MS);
  const connectors = (list.data?.connectors ?? []).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return (
    <div>
      <h1>Connectors</h1>
      {listError(list.error, scope) ? <p className="error">{listError(list.error, scope)}</p> : null}
      {list.data && !connectors.length ? <p className="muted">No connectors.</p> : null}
      {connectors.map((c) => (
        <section key={`${c.namespace}/${c.name}`} className="card" data-connector={c.name}>
          <h2>
            {c.displayName || c.name}{' '}
            <small className="muted">
              {c.name} in {c.namespace}
            </small>{' '}
            <span className={`badge status-${c.status.phase ?? ''}`}>{c.status.phase ?? '—'}</span>
          </h2>
          <p>
            <code>{c.url}</code> {c.status.message ? <span className="muted">· {c.status.message}</span> : null}
          </p>
          <p>
            Agents:{' '}
            {c.agentNames.length
              ? c.agentNames.map((n, i) => (
                  <span key={n}>
                    {i ? ', ' : ''}
                    <a href={href('agents', c.namespace, n)}>{n}</a>
                  </span>
                ))
              : '—'}
          </p>
          <Tools namespace={c.namespace} name={c.name} />
        </section>
      ))}
    </div>
  );
}

function Tools({ namespace, name }: { namespace: string; name: string }) {
  const [tools, setTools] = useState<{ name: string; description: string }[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<{ tools: { name: string; description: string }[] }>('GET', `/api/v1/connectors/${encodeURIComponent(name)}/tools${q({ namespace })}`)
      .then((r) => setTools(r.tools))
      .catch((err: Error) => setError(err.message));
  }, [namespace, name]);
  if (error) return <p className="error">Tools: {error}</p>;
  if (!tools) return <p className="muted">Tools: loading…</p>;
  return (
    <details className="tools">
      <summary>{tools.length} tools</summary>
      <ul>
        {tools.map((t) => (
          <li key={t.name}>
            <code>{t.name}</code> <span className="muted">{t.description}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
