// Triggers and webhooks (docs/triggers-and-webhooks.md): each trigger's hook path, agent and
// what came of its deliveries; each webhook's URL, events and delivery status with its last
// failures.

import { api, listError, q } from '../api';
import { href, usePoll } from '../hooks';
import type { Trigger, Webhook, WebhookAttempt } from '../types';
import { LIST_POLL_MS } from './Agents';

const byName = <T extends { namespace: string; name: string }>(a: T, b: T): number => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

const attempt = (a: WebhookAttempt): string => `${a.time} ${a.agent} #${a.seq} ${a.type}: ${a.status ? `HTTP ${a.status}` : (a.message ?? 'no answer')}`;

export function HooksPage({ scope }: { scope: string }) {
  const ns = q({ namespace: scope || undefined });
  const triggers = usePoll(() => api<{ triggers: Trigger[] }>('GET', `/api/v1/triggers${ns}`), LIST_POLL_MS);
  const webhooks = usePoll(() => api<{ webhooks: Webhook[] }>('GET', `/api/v1/webhooks${ns}`), LIST_POLL_MS);
  const ts = (triggers.data?.triggers ?? []).sort(byName);
  const ws = (webhooks.data?.webhooks ?? []).sort(byName);
  return (
    <div>
      <h1>Triggers</h1>
      <p className="muted">A POST to a trigger's hook, signed with its secret, starts a task on its agent; a replayed delivery starts nothing.</p>
      {listError(triggers.error, scope) ? <p className="error">{listError(triggers.error, scope)}</p> : null}
      {triggers.data && !ts.length ? <p className="muted">No triggers.</p> : null}
      {ts.map((t) => (
        <section key={`${t.namespace}/${t.name}`} className="card" data-trigger={t.name}>
          <h2>
            {t.name} <small className="muted">in {t.namespace}</small>{' '}
            {t.lastDelivery ? (
              <span
                className={`badge ${t.lastDelivery.result === 'Started' || t.lastDelivery.result === 'Duplicate' ? 'status-Running' : 'status-Failed'}`}
                data-testid="trigger-last"
              >
                {t.lastDelivery.result}
              </span>
            ) : null}
          </h2>
          <p>
            Starts a task on <a href={href('agents', t.namespace, t.agent)}>{t.agent}</a>. Hook: <code>POST {t.hookPath}</code>, signed in{' '}
            <code>{t.signature.header}</code> with secret {t.secretRef.name}.
          </p>
          <p data-testid="trigger-counts">
            {Object.entries(t.counts ?? {})
              .map(([k, v]) => `${k} ${v}`)
              .join(', ') || 'No deliveries yet'}
            .
            {t.lastDelivery
              ? ` Last: ${t.lastDelivery.time}${t.lastDelivery.id ? ` (${t.lastDelivery.id})` : ''}${t.lastDelivery.message ? `: ${t.lastDelivery.message}` : ''}.`
              : ''}
          </p>
          <pre className="muted">{t.instructions}</pre>
        </section>
      ))}
      <h1>Webhooks</h1>
      <p className="muted">The chosen events of the namespace's agents, signed and sent to a URL, in order per agent, retried until acknowledged.</p>
      {listError(webhooks.error, scope) ? <p className="error">{listError(webhooks.error, scope)}</p> : null}
      {webhooks.data && !ws.length ? <p className="muted">No webhooks.</p> : null}
      {ws.map((w) => (
        <section key={`${w.namespace}/${w.name}`} className="card" data-webhook={w.name}>
          <h2>
            {w.name} <small className="muted">in {w.namespace}</small>
          </h2>
          <p>
            <code>{w.url}</code>: {w.eventTypes.join(', ')} of {w.agents?.length ? w.agents.join(', ') : 'every agent'}.
          </p>
          <p data-testid="webhook-counts">
            {w.delivered ?? 0} delivered, {w.failed ?? 0} failed attempts.{w.lastDelivery ? ` Last: ${attempt(w.lastDelivery)}.` : ''}
          </p>
          {w.lastFailures?.length ? (
            <ul data-testid="webhook-failures">
              {w.lastFailures.map((f) => (
                <li key={`${f.time}-${f.agent}-${f.seq}`}>{attempt(f)}</li>
              ))}
            </ul>
          ) : null}
        </section>
      ))}
    </div>
  );
}
