// The agent page's banner for tool calls that wait for approval: each with its tool, its input
// and when the policy's default applies, and Allow/Deny (POST …/approvals/:id). A refusal (403
// without the right to decide, 409 when someone decided first) is shown beside it.

import { useState } from 'react';
import { api, q } from '../api';
import type { PendingApproval } from '../approvals';

export function ApprovalBanner({ path, namespace, pending, gone }: { path: string; namespace: string; pending: PendingApproval[]; gone: boolean }) {
  if (!pending.length || gone) return null;
  return (
    <div className="approvals" role="alert" data-testid="approvals">
      {pending.map((p) => (
        <Approval key={p.id} path={path} namespace={namespace} approval={p} />
      ))}
    </div>
  );
}

function Approval({ path, namespace, approval: p }: { path: string; namespace: string; approval: PendingApproval }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const decide = async (decision: 'allow' | 'deny'): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', `${path}/approvals/${encodeURIComponent(p.id)}${q({ namespace })}`, { decision, ...(reason ? { reason } : {}) });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="approval card" data-testid="approval">
      <p>
        <strong>{p.tool}</strong> waits for approval{' '}
        <small className="muted">
          (then {p.onTimeout} at {new Date(p.expiresAt).toLocaleTimeString()})
        </small>
      </p>
      <pre className="approval-input">{JSON.stringify(p.input, null, 2)}</pre>
      <input type="text" placeholder="reason (optional; the model reads a denial's)" value={reason} onChange={(e) => setReason(e.target.value)} />
      <button type="button" onClick={() => void decide('allow')} disabled={busy}>
        Allow
      </button>
      <button type="button" className="deny" onClick={() => void decide('deny')} disabled={busy}>
        Deny
      </button>
      {error ? <p className="error">{error}</p> : null}
    </div>
  );
}
