// A real PluginContext for plugin unit tests: registries on an in-memory SQLite state, real
// hooks and metrics. Agent operations refuse, as they do while a real service is starting.

import type { Agent } from '../../pkg/api/agent.js';
import type { Squad } from '../../pkg/api/squad.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { Hooks } from '../../pkg/plugin/hooks.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';

export function testPluginContext(over: Partial<PluginContext> & Pick<PluginContext, 'config' | 'provideEventStore'>): PluginContext {
  const state = new SqliteState(':memory:');
  const notYet = async (): Promise<never> => {
    throw new Error('agent operations are available once the service has started');
  };
  return {
    logger: createLogger({ level: 'silent' }),
    metrics: new Metrics(),
    registry: {
      agents: new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy),
      squads: new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy),
    },
    hooks: new Hooks(),
    operations: { cancel: notYet, delete: notYet },
    onStart: () => undefined,
    ...over,
  };
}
