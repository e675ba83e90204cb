// The templates agents may name, read from labelled ConfigMaps in the install namespace and kept
// current by a watch: a template added, edited or removed with kubectl counts from the next pod
// the runtime makes. A ConfigMap that does not parse is left out and logged with the reason.

import { CoreV1Api, type KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { DEFAULT_TEMPLATE } from '../../api/agent.js';
import type { Logger } from '../../observability/logger.js';
import { TEMPLATE_KEY, TEMPLATE_LABEL, parseTemplate, type WorkerTemplate } from './template.js';
import { restartOnError } from './watch.js';

export interface TemplateCatalogOptions {
  kubeConfig: KubeConfig;
  /** Where templates live (the install namespace). */
  namespace: string;
  /** The built-in "default" (from the server's flags), which a ConfigMap may override. */
  defaults: WorkerTemplate;
  logger: Logger;
}

export class TemplateCatalog {
  private readonly informer;
  private stopWatch?: () => void;
  /**
   * Each ConfigMap parsed once per version (admission asks on every agent write): its template,
   * or undefined when it does not parse (logged once).
   */
  private readonly parsed = new Map<string, { version: string; template: WorkerTemplate | undefined }>();

  constructor(private readonly o: TemplateCatalogOptions) {
    const core = o.kubeConfig.makeApiClient(CoreV1Api);
    this.informer = makeInformer<V1ConfigMap>(
      o.kubeConfig,
      `/api/v1/namespaces/${o.namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace: o.namespace, labelSelector: TEMPLATE_LABEL }),
      TEMPLATE_LABEL,
    );
    this.informer.on('delete', (cm) => void this.parsed.delete(cm.metadata?.uid ?? cm.metadata?.name ?? ''));
  }

  async start(): Promise<void> {
    this.stopWatch = await restartOnError(this.informer, this.o.logger, 'template ConfigMaps');
  }

  async stop(): Promise<void> {
    this.stopWatch?.();
  }

  /** "default" and every template whose ConfigMap parses. */
  names(): string[] {
    const names = new Set([DEFAULT_TEMPLATE]);
    for (const cm of this.informer.list()) {
      const name = cm.metadata?.labels?.[TEMPLATE_LABEL];
      if (name && this.parse(cm)) names.add(name);
    }
    return [...names].sort();
  }

  /** The template, or undefined when no valid one has that name. */
  resolve(name: string): WorkerTemplate | undefined {
    const cm = this.informer.list().find((c) => c.metadata?.labels?.[TEMPLATE_LABEL] === name);
    if (!cm) return name === DEFAULT_TEMPLATE ? this.o.defaults : undefined;
    return this.parse(cm) ?? (name === DEFAULT_TEMPLATE ? this.o.defaults : undefined);
  }

  private parse(cm: V1ConfigMap): WorkerTemplate | undefined {
    const key = cm.metadata?.uid ?? cm.metadata?.name ?? '';
    const version = cm.metadata?.resourceVersion ?? '';
    const seen = this.parsed.get(key);
    if (seen?.version === version) return seen.template;
    let template: WorkerTemplate | undefined;
    try {
      template = parseTemplate(cm.data?.[TEMPLATE_KEY] ?? '', this.o.defaults);
    } catch (err) {
      this.o.logger.warn(
        { configMap: `${this.o.namespace}/${cm.metadata?.name}`, err: (err as Error).message },
        'template ConfigMap ignored: it does not parse',
      );
    }
    this.parsed.set(key, { version, template });
    return template;
  }
}
