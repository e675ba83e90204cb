// A real PluginContext for plugin unit tests: registries on an in-memory SQLite state with the
// admission chain, informers over them, real metrics and controllers as the service makes them;
// the test sees the whole registries and informers (TestPluginContext), the plugin only its
// contract's narrow view of them. Agent operations refuse, as they do while a real service is
// starting. Like the embedded home it has no `cluster`; a test of a cluster plugin passes one
// (`testPluginContext({ ..., cluster: { kubeConfig, installNamespace } })`, a real control plane's).

import type { Agent } from '../../pkg/api/agent.js';
import type { Squad } from '../../pkg/api/squad.js';
import { Controller } from '../../pkg/controller/framework/controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { AdmissionChain } from '../../pkg/registry/admission/admission.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';
import { squadStrategy } from '../../pkg/registry/squad/strategy.js';

/** The context with the real registries and informers behind it, for the test's own use. */
export interface TestPluginContext extends PluginContext {
  registry: { agents: Registry<Agent>; squads: Registry<Squad> };
  informers: { agents: Informer<Agent>; squads: Informer<Squad> };
}

export function testPluginContext(
  over: Partial<Omit<PluginContext, 'registry' | 'informers'>> & Pick<PluginContext, 'config' | 'provideEventStore'>,
): TestPluginContext {
  const state = new SqliteState(':memory:');
  const logger = createLogger({ level: 'silent' });
  const admission = new AdmissionChain();
  const agents = new Registry<Agent>(state.store<Agent>('Agent'), agentStrategy, admission);
  const squads = new Registry<Squad>(state.store<Squad>('Squad'), squadStrategy, admission);
  const notYet = async (): Promise<never> => {
    throw new Error('agent operations are available once the service has started');
  };
  return {
    logger,
    metrics: new Metrics(),
    registry: { agents, squads },
    informers: { agents: new Informer(agents, logger), squads: new Informer(squads, logger) },
    controller: (spec) => new Controller({ ...spec, logger }),
    admission: { register: (p) => void admission.register(p) },
    operations: { cancel: notYet, delete: notYet },
    onStart: () => undefined,
    ...over,
  };
}
