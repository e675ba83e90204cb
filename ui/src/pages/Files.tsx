// The workspace, read-only: browse directories, open a file's text. Read again on Refresh and
// whenever `reloadOn` changes (the agent page passes its last task end).

import { useEffect, useState } from 'react';
import { ApiFailure } from '../api';
import type { WorkspaceView } from '../types';

export function Files({ load, reloadOn = 0 }: { load: (path: string) => Promise<WorkspaceView>; reloadOn?: number }) {
  const [path, setPath] = useState('');
  const [view, setView] = useState<WorkspaceView>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stale = false;
    load(path)
      .then((v) => {
        if (stale) return;
        setView(v);
        setError(undefined);
      })
      .catch((err: Error) => {
        if (stale) return;
        setView(undefined);
        setError(err instanceof ApiFailure && err.status === 501 ? `Not available here: ${err.message}` : err.message);
      });
    return () => {
      stale = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [path, tick, reloadOn]);

  const parts = path.split('/').filter(Boolean);
  const join = (name: string): string => [...parts, name].join('/');
  return (
    <div className="files card" data-testid="files">
      <div className="crumbs">
        <button type="button" className="link" onClick={() => setPath('')}>
          workspace
        </button>
        {parts.map((p, i) => (
          <span key={i}>
            {' / '}
            <button type="button" className="link" onClick={() => setPath(parts.slice(0, i + 1).join('/'))}>
              {p}
            </button>
          </span>
        ))}
        <button type="button" className="refresh" onClick={() => setTick(tick + 1)}>
          Refresh
        </button>
      </div>
      {error ? <p className="error">{error}</p> : null}
      {view?.type === 'directory' ? (
        view.entries?.length ? (
          <ul className="entries">
            {view.entries.map((e) => (
              <li key={e.name} className={`entry entry-${e.type}`}>
                {e.type === 'directory' || e.type === 'file' ? (
                  <button type="button" className="link" onClick={() => setPath(join(e.name))}>
                    {e.name}
                    {e.type === 'directory' ? '/' : ''}
                  </button>
                ) : (
                  <span>{e.name}</span>
                )}
                {e.size !== undefined ? <span className="muted"> {e.size} B</span> : null}
              </li>
            ))}
            {view.truncated ? <li className="muted">… more entries not shown</li> : null}
          </ul>
        ) : (
          <p className="muted">Empty.</p>
        )
      ) : null}
      {view?.type === 'file' ? (
        view.binary ? (
          <p className="muted">Binary file, {view.size} bytes.</p>
        ) : (
          <pre className="file-content" data-testid="file-content">
            {view.content}
            {view.truncated ? '\n… (truncated)' : ''}
          </pre>
        )
      ) : null}
    </div>
  );
}
