// What every part of the composition root shares: the settings, the logger, the manager the part
// registers its runnables with, and the few cross-cutting objects (metrics, hooks, leadership).

import type { TemplateConfig } from '../../pkg/api/template-settings.js';
import type { Manager } from '../../pkg/manager/manager.js';
import type { Logger } from '../../pkg/observability/logger.js';
import type { Metrics } from '../../pkg/observability/metrics.js';
import type { Hooks } from '../../pkg/plugin/hooks.js';
import type { ServeOptions } from './options.js';
import type { RuntimeKind } from './runtimes.js';

export interface Wiring {
  o: ServeOptions;
  logger: Logger;
  /** A component's logger (`component` field). */
  child: (component: string) => Logger;
  /** The service's manager: runnables start in the order the parts add them, stop in reverse. */
  manager: Manager;
  metrics: Metrics;
  hooks: Hooks;
  /** The resolved, private, writable data directory. */
  dataDir: string;
  /** The embedded home's templates, checked (pkg/api/template-settings.ts). */
  templates: TemplateConfig[];
  /** Where agents run: local workers or pods. */
  runtimeKind: RuntimeKind;
  /** Whether this replica runs the reconcilers now; flipped by leader election (leader.ts). */
  leadership: { leading: boolean };
}

/**
 * A value made by a later part that an earlier one's callbacks need (the proxy's events go to the
 * agent controller, made after it). Reading it before it is set is a wiring bug: say which.
 */
export class Late<T> {
  private value?: T;

  constructor(private readonly what: string) {}

  set(v: T): void {
    this.value = v;
  }

  get(): T {
    if (this.value === undefined) throw new Error(`${this.what} is not wired yet`);
    return this.value;
  }

  /** The value, or undefined before it is set (for callbacks that may fire early and can skip). */
  peek(): T | undefined {
    return this.value;
  }
}
