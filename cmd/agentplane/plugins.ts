// Plugins: the event store, sleep and wake, third-party modules. Loaded now; their controllers and
// start steps run once the service is serving (leader.ts), as the leader's.

import { Controller } from '../../pkg/controller/framework/controller.js';
import { CORE_NEEDS, loadPlugins } from '../../pkg/plugin/loader.js';
import type { PluginContext } from '../../pkg/plugin/types.js';
import { cancelRunningTask } from '../../pkg/registry/agent/requests.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import { DEFAULT_EVENTS_PER_AGENT, type EventStore } from '../../pkg/registry/events.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import type { Home } from './homes.js';
import type { Storage } from './storage.js';
import type { Wiring } from './wiring.js';

export interface PluginParts {
  names: string[];
  events: EventLog;
  controllers: Controller[];
  starts: (() => Promise<void> | void)[];
}

export async function wirePlugins({ o, child, metrics, manager, dataDir }: Wiring, home: Home, s: Storage): Promise<PluginParts> {
  const eventStores: EventStore[] = [];
  const controllers: Controller[] = [];
  const starts: (() => Promise<void> | void)[] = [];
  const ctx: PluginContext = {
    config: { dataDir, options: o.pluginOptions ?? {}, eventsPerAgent: o.eventsPerAgent ?? DEFAULT_EVENTS_PER_AGENT },
    ...(home.cluster ? { cluster: home.cluster } : {}),
    logger: child('plugin'),
    metrics,
    registry: { agents: s.agents },
    informers: { agents: s.informers.agents },
    controller: (spec) => {
      const c = new Controller({ ...spec, logger: child('plugin') });
      controllers.push(c);
      return c;
    },
    admission: { register: (p) => void s.admission.register(p) },
    operations: {
      cancel: (ns, name, reason) => cancelRunningTask(s.agents, ns, name, reason),
      delete: async (ns, name) => void (await s.agents.delete(ns, name)),
    },
    onStart: (fn) => void starts.push(fn),
    provideEventStore: (store) => {
      if (eventStores.length) throw new Error('an event store is already provided by another plugin');
      eventStores.push(store);
    },
  };
  const plugins = await loadPlugins(o.plugins, ctx, BUILTIN_PLUGINS, CORE_NEEDS);
  manager.onStop('plugins', () => plugins.teardown());
  const [eventStore] = eventStores;
  if (!eventStore) throw new Error(`no plugin provides an event store; add "event-store-sqlite" to --plugins`);
  const events = new EventLog(eventStore);
  events.onAppend((ev) => metrics.eventsAppended.inc({ type: ev.type }));
  return { names: plugins.names, events, controllers, starts };
}
