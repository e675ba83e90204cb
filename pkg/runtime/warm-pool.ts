// What both runtimes' warm pools share (./local/warm-pool.ts: processes; ./kubernetes/pod-pool.ts:
// pods): a slot's identity before an agent takes it, the settings its engine starts with, and
// how fast slots that keep dying are replaced.

import { DEFAULT_MODEL, type Role } from '../api/agent.js';
import type { PrestartSettings } from '../api/worker-protocol.js';

/**
 * A slot's identity for its token and model credential until an agent claims it. No agent can
 * have it: a namespace name never starts with a dot.
 */
export const SLOT_NAMESPACE = '.warm-pool';

/** What a slot's engine starts with: the defaults an agent gets when it sets none (registry/agent/strategy.ts). */
export const slotSettings = (role: Role = 'manager'): PrestartSettings => ({ model: DEFAULT_MODEL, role });

/**
 * Pure arithmetic of the restart backoff: the delay before starting a slot again after
 * `deaths` unclaimed slots died in a row (0: none, start now).
 */
export function refillDelay(deaths: number, first: number, max: number): number {
  if (deaths <= 0) return 0;
  return Math.min(max, first * 2 ** Math.min(deaths - 1, 30));
}
