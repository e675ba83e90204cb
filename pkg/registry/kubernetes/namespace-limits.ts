// The cluster home's per-namespace caps (docs/admission.md): the ConfigMap `agentplane-limits` in
// the install namespace, one key per namespace, its value that namespace's caps as JSON
// (`team-a: '{"maxWorkers": 4, "maxTasks": 2}'`). In the install namespace rather than each
// tenant's, because a namespace's editors may edit its ConfigMaps and so could raise their own
// cap. Kept current by a watch: an edit counts from the next admission. A value that does not
// parse is left out (the flags' defaults apply to that namespace) and logged once per version.

import { CoreV1Api, type KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { LIMITS_CONFIGMAP, type NamespaceLimits, parseNamespaceLimits } from '../../api/namespace-limits.js';
import type { Logger } from '../../observability/logger.js';
import { restartOnError } from '../../runtime/kubernetes/watch.js';

export class NamespaceLimitsConfigMap {
  private readonly informer;
  private stopWatch?: () => void;
  private parsed: { version: string; limits: Map<string, NamespaceLimits> } = { version: '', limits: new Map() };

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly logger: Logger,
  ) {
    const core = kubeConfig.makeApiClient(CoreV1Api);
    this.informer = makeInformer<V1ConfigMap>(kubeConfig, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));
  }

  async start(): Promise<void> {
    this.stopWatch = await restartOnError(this.informer, this.logger, `ConfigMap ${this.namespace}/${LIMITS_CONFIGMAP}`);
  }

  stop(): void {
    this.stopWatch?.();
  }

  /** The namespace's own caps, or undefined when the ConfigMap names none (or none that parse). */
  limitsFor(namespace: string): NamespaceLimits | undefined {
    const cm = this.informer.get(LIMITS_CONFIGMAP, this.namespace);
    if (!cm) return undefined;
    const version = cm.metadata?.resourceVersion ?? '';
    if (this.parsed.version !== version) this.parsed = { version, limits: this.parse(cm) };
    return this.parsed.limits.get(namespace);
  }

  private parse(cm: V1ConfigMap): Map<string, NamespaceLimits> {
    const out = new Map<string, NamespaceLimits>();
    for (const [ns, text] of Object.entries(cm.data ?? {})) {
      const where = `ConfigMap ${this.namespace}/${LIMITS_CONFIGMAP} key ${ns}`;
      try {
        out.set(ns, parseNamespaceLimits(JSON.parse(text), where));
      } catch (err) {
        this.logger.warn(
          { configMap: `${this.namespace}/${LIMITS_CONFIGMAP}`, key: ns, err: (err as Error).message },
          "a namespace's limits are ignored: they do not parse",
        );
      }
    }
    return out;
  }
}
