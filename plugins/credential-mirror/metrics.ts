// The credential mirror's metric.

import { Counter } from 'prom-client';
import type { PluginContext } from '../../pkg/plugin/types.js';

/** Mirror writes by outcome; one per service (the registry is the service's). */
export function syncCounter(ctx: PluginContext): Counter<'outcome'> {
  const name = 'agentplane_credential_mirror_syncs_total';
  const existing = ctx.metrics.registry.getSingleMetric(name) as Counter<'outcome'> | undefined;
  return (
    existing ??
    new Counter({
      name,
      help: 'Writes of the credential mirror by outcome: created, updated (rotated or repaired), deleted, blocked (a Secret agentplane did not make holds the name).',
      labelNames: ['outcome'] as const,
      registers: [ctx.metrics.registry],
    })
  );
}
