// The model side: the demo's scripted model, and the model proxy that alone holds the key (workers
// reach the model through it with a per-agent credential the runtime issues and revokes).

import type { AgentController } from '../../pkg/controller/agent-controller.js';
import { CredentialRegistry, ModelProxy, type ModelProxyEvents, TurnGate, UsageMeter } from '../../pkg/modelproxy/index.js';
import type { ReportBudgets } from '../../pkg/modelproxy/reports.js';
import { startScriptedModelProcess, type ScriptedModelProcess } from '../../pkg/scriptedmodel/index.js';
import type { ModelProxyMode } from './runtimes.js';
import { Late, type Wiring } from './wiring.js';

export interface ModelSide {
  /** The demo's scripted model: a process of its own on loopback (pkg/scriptedmodel/process.ts). */
  model?: ScriptedModelProcess;
  /** The model endpoint and key the server uses (the demo's, or the environment's). */
  modelEnv: { apiKey?: string | undefined; baseUrl?: string | undefined };
  credentials: CredentialRegistry;
  usageMeter: UsageMeter;
  proxy: ModelProxy;
  /** The proxy's retries and failures, reported into tasks (for pods' sidecar reports too). */
  events: ModelProxyEvents;
  /** Where pods' engines reach the model. */
  mode: ModelProxyMode;
  /** Set once the agent controller exists: it receives the proxy's task events. */
  controller: Late<Pick<AgentController, 'taskEvent' | 'failTask'>>;
  /** Set with the controllers: the budgets checked before every model request (docs/budgets.md). */
  budget: Late<ReportBudgets>;
  /** Holds agents' model requests for checkpoints of running tasks; absent when pods' sidecars serve them. */
  turns?: TurnGate;
}

/** `templateDeadlineMs`: a template's own retry deadline (the runtime knows templates; made later). */
export async function wireModel(
  { o, logger, child, metrics, manager, runtimeKind }: Wiring,
  templateDeadlineMs: (template: string) => number | undefined,
): Promise<ModelSide> {
  // Out of the server's process: its JSON and SSE work for every engine would be on the API's loop.
  const model = o.demo ? await startScriptedModelProcess({ apiKey: 'agentplane-demo', onTrouble: (what) => child('scripted-model').error(what) }) : undefined;
  if (model) {
    manager.onStop('scripted model', () => model.close());
    logger.info({ modelUrl: model.url }, 'demo mode: agents use the scripted model');
  }
  const modelEnv = model
    ? { apiKey: 'agentplane-demo', baseUrl: model.url }
    : (o.model ?? { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL });
  if (!modelEnv.apiKey) logger.warn('ANTHROPIC_API_KEY is not set: tasks will fail to reach the model (use --demo to try without a key)');
  const credentials = new CredentialRegistry();
  const usageMeter = new UsageMeter(metrics, { deadlineMs: templateDeadlineMs });
  const controller = new Late<Pick<AgentController, 'taskEvent' | 'failTask'>>('the agent controller');
  const budget = new Late<ReportBudgets>('the budget guard');
  const events: ModelProxyEvents = {
    retry: (g, payload) =>
      void controller
        .peek()
        ?.taskEvent(g.ref, g.uid, { type: 'model_retry', payload })
        .catch(() => undefined),
    // Awaited by the proxy before the engine sees the failure, so the task ends with this reason.
    failed: async (g, error) => {
      await controller
        .peek()
        ?.failTask(g.ref, g.uid, error)
        .catch(() => undefined);
    },
  };
  // Checkpoints of running tasks wait for a step boundary here: only where this proxy serves the agents.
  const gate = new TurnGate();
  const proxy = new ModelProxy({
    gate,
    ...(modelEnv.baseUrl ? { upstream: modelEnv.baseUrl } : {}),
    ...(modelEnv.apiKey ? { apiKey: modelEnv.apiKey } : {}),
    credentials,
    meter: usageMeter,
    logger: child('model-proxy'),
    ...(o.modelRetry ? { retry: o.modelRetry } : {}),
    onRetry: (status) => metrics.modelRetries.inc({ status: String(status) }),
    events,
    budget: { admit: (g, signal) => budget.peek()?.admit(g, signal) ?? Promise.resolve({ allow: true }) },
  });
  manager.onStop('model proxy', () => proxy.close());
  // Pods: their own proxy (a sidecar holding the mirrored key) wherever the mirror puts the key
  // in their namespace; the demo's scripted model is on the server's loopback, so the server's proxy.
  const mirror = o.plugins.includes('credential-mirror');
  const mode: ModelProxyMode = o.pods?.modelProxy ?? (mirror && !o.demo ? 'sidecar' : 'server');
  if (runtimeKind === 'kubernetes') {
    logger.info(
      { modelProxy: mode },
      mode === 'sidecar' ? 'pods reach the model through their own proxy sidecar' : "pods reach the model through the server's proxy",
    );
    if (mode === 'sidecar' && !mirror)
      logger.warn('--model-proxy sidecar without the credential-mirror plugin: pods wait until each namespace has the model Secret');
  }
  const servesAgents = runtimeKind !== 'kubernetes' || mode === 'server';
  return { ...(model ? { model } : {}), modelEnv, credentials, usageMeter, proxy, events, mode, controller, budget, ...(servesAgents ? { turns: gate } : {}) };
}
