// The event-store-redis plugin: a shared EventStore on Redis Streams, for several replicas of
// the service (docs/event-stores.md). Settings in options.ts.

import { DEFAULT_EVENTS_PER_AGENT, type Plugin, type PluginContext, type Teardown } from '../../pkg/plugin/types.js';
import { storeMetrics } from './metrics.js';
import { redactUrl, resolveRedisSettings } from './options.js';
import { RedisEventStore } from './redis-event-store.js';

export const PLUGIN_NAME = 'event-store-redis';

const plugin: Plugin = {
  name: PLUGIN_NAME,
  setup(ctx: PluginContext): Teardown {
    const settings = resolveRedisSettings(ctx.config.options[PLUGIN_NAME]);
    const maxEventsPerStream = ctx.config.eventsPerAgent ?? DEFAULT_EVENTS_PER_AGENT;
    const logger = ctx.logger.child({ plugin: PLUGIN_NAME });
    const store = new RedisEventStore({
      connection: settings.connection,
      keyPrefix: settings.keyPrefix,
      maxEventsPerStream,
      observer: storeMetrics(ctx.metrics),
      logger,
    });
    ctx.provideEventStore(store);
    const where = { url: redactUrl(settings.connection.url), keyPrefix: settings.keyPrefix, eventsPerAgent: maxEventsPerStream };
    logger.info(where, 'redis event store configured');
    store.ready().then(
      () => logger.info(where, 'redis event store connected'),
      () => undefined, // logged by the store; readiness reports it
    );
    return () => store.close();
  },
};

export { RedisEventStore };
export default plugin;
