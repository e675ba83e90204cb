// The inbound side of Triggers (docs/triggers-and-webhooks.md): POST /api/v1/triggers/:name/hook.
// The caller has no bearer token; the HMAC-SHA256 signature of the raw body with the trigger's
// secret is what authenticates it, compared in constant time. An accepted delivery gives the
// trigger's agent a task whose instructions the template fills from the payload. Its delivery id
// is claimed in the trigger's status (a conditional write, so two replays racing cannot both
// win) before the task is assigned, and given back if the task could not be: a replay starts
// nothing twice, and the ids survive a restart because they are stored.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Agent, INSTRUCTIONS_MAX_LENGTH } from '../../api/agent.js';
import { ApiError } from '../../api/errors.js';
import { renderTemplate } from '../../api/template.js';
import { DELIVERY_ID_MAX_LENGTH, SEEN_DELIVERIES_MAX, type Trigger, type TriggerDelivery, type TriggerResult } from '../../api/trigger.js';
import type { Logger } from '../../observability/logger.js';
import type { Registry } from '../../registry/registry.js';
import type { SecretStore } from '../../registry/secrets.js';

export const TRIGGER_OWNER = { manager: 'agentplane-trigger', operation: 'Update' } as const;

export interface HookAnswer {
  status: number;
  body: { result: TriggerResult; trigger: string; namespace: string; agent: string; deliveryId: string; task?: number; message?: string };
}

type Headers = Record<string, string | string[] | undefined>;

const headerOf = (h: Headers, name: string): string | undefined => {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

/** Whether `given` ("<prefix><hex>") is the HMAC-SHA256 of `raw` with `secret`; constant time in the digest. */
export function signatureMatches(raw: Buffer, secret: string, prefix: string, given: string | undefined): boolean {
  if (given === undefined || !given.startsWith(prefix)) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const hex = given.slice(prefix.length).trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
  return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

export class TriggerHooks {
  constructor(
    private readonly triggers: Registry<Trigger>,
    private readonly agents: Registry<Agent>,
    private readonly secrets: SecretStore,
    private readonly log: Logger,
  ) {}

  async deliver(namespace: string, name: string, headers: Headers, raw: Buffer): Promise<HookAnswer> {
    const t = await this.triggers.get(namespace, name);
    if (!t || t.metadata.deletionTimestamp) throw new ApiError('NotFound', 404, `trigger "${name}" not found in namespace "${namespace}"`);
    const id = (headerOf(headers, t.spec.deliveryIdHeader) ?? '').trim();
    const answer = (status: number, result: TriggerResult, extra: { task?: number; message?: string } = {}): HookAnswer => ({
      status,
      body: { result, trigger: name, namespace, agent: t.spec.agent, deliveryId: id, ...extra },
    });
    const secret = (await this.secrets.get(namespace, t.spec.secretRef.name))?.data[t.spec.secretRef.key];
    if (!secret) {
      const message = `the trigger's secret "${t.spec.secretRef.name}" (key "${t.spec.secretRef.key}") does not exist, so no signature can be checked; nothing is accepted until it does`;
      await this.record(t, { id, result: 'SecretMissing', message });
      return answer(401, 'SecretMissing', { message });
    }
    if (!signatureMatches(raw, secret, t.spec.signature.prefix, headerOf(headers, t.spec.signature.header))) {
      const message = `missing or wrong signature in ${t.spec.signature.header}: expected "${t.spec.signature.prefix}" and the hex HMAC-SHA256 of the body`;
      this.log.info({ namespace, name, deliveryId: id.slice(0, 100) }, 'trigger delivery refused: bad signature');
      await this.record(t, { id, result: 'BadSignature', message });
      return answer(401, 'BadSignature', { message });
    }
    if (id.length > DELIVERY_ID_MAX_LENGTH) {
      const message = `the delivery id in ${t.spec.deliveryIdHeader} is longer than ${DELIVERY_ID_MAX_LENGTH} characters`;
      await this.record(t, { id: id.slice(0, DELIVERY_ID_MAX_LENGTH), result: 'BadPayload', message });
      return answer(400, 'BadPayload', { message });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      const message = 'the body is not JSON';
      await this.record(t, { id, result: 'BadPayload', message });
      return answer(400, 'BadPayload', { message });
    }
    const instructions = renderTemplate(t.spec.instructions, payload, INSTRUCTIONS_MAX_LENGTH);
    if (!instructions.trim()) {
      const message = 'the instructions template rendered nothing from this payload';
      await this.record(t, { id, result: 'BadPayload', message });
      return answer(400, 'BadPayload', { message });
    }
    if (id && !(await this.claim(t, id))) return answer(202, 'Duplicate', { message: 'this delivery id started a task already; nothing started' });
    return this.start(t, id, instructions, answer);
  }

  /** Gives the agent the task; on refusal the delivery id is given back, so a redelivery may start it. */
  private async start(
    t: Trigger,
    id: string,
    instructions: string,
    answer: (s: number, r: TriggerResult, e?: { task?: number; message?: string }) => HookAnswer,
  ) {
    const { namespace } = t.metadata;
    try {
      const a = await this.agents.update(
        namespace,
        t.spec.agent,
        (agent) => {
          agent.spec.instructions = instructions;
          agent.spec.task += 1;
        },
        { owner: TRIGGER_OWNER },
      );
      await this.record(t, { id, result: 'Started', task: a.spec.task });
      this.log.info({ namespace, name: t.metadata.name, agent: t.spec.agent, task: a.spec.task, deliveryId: id }, 'trigger started a task');
      return answer(202, 'Started', { task: a.spec.task });
    } catch (err) {
      if (id) await this.release(t, id);
      if (!(err instanceof ApiError)) throw err;
      const result: TriggerResult = err.code === 404 ? 'AgentMissing' : 'AgentBusy';
      const message = err.code === 404 ? `agent "${t.spec.agent}" does not exist in namespace "${namespace}"` : err.message;
      await this.record(t, { id, result, message });
      return answer(409, result, { message });
    }
  }

  /** Adds `id` to the seen ids unless there; false (and a Duplicate recorded) when it was. */
  private async claim(t: Trigger, id: string): Promise<boolean> {
    let fresh = false;
    await this.triggers.updateStatus(t.metadata.namespace, t.metadata.name, (s) => {
      const seen = s.seenDeliveries ?? [];
      fresh = !seen.includes(id);
      if (fresh) s.seenDeliveries = [...seen, id].slice(-SEEN_DELIVERIES_MAX);
      else note(s, { id, result: 'Duplicate' });
    });
    return fresh;
  }

  private async release(t: Trigger, id: string): Promise<void> {
    await this.triggers.updateStatus(t.metadata.namespace, t.metadata.name, (s) => {
      s.seenDeliveries = (s.seenDeliveries ?? []).filter((x) => x !== id);
    });
  }

  /** Notes the delivery in the status; a trigger deleted meanwhile has no status to keep. */
  private async record(t: Trigger, d: Omit<TriggerDelivery, 'time'>): Promise<void> {
    try {
      await this.triggers.updateStatus(t.metadata.namespace, t.metadata.name, (s) => note(s, d));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
}

function note(s: Trigger['status'], d: Omit<TriggerDelivery, 'time'>): void {
  s.lastDelivery = { time: new Date().toISOString(), ...d };
  s.counts = { ...s.counts, [d.result]: (s.counts?.[d.result] ?? 0) + 1 };
}
