// The event-store-sqlite plugin: provides a SQLite-backed EventStore for embedded mode.

import fs from 'node:fs';
import path from 'node:path';

import { DEFAULT_EVENTS_PER_AGENT, type Plugin, type PluginContext, type Teardown } from '../../pkg/plugin/types.js';
import { SqliteEventStore } from './sqlite-event-store.js';

export const PLUGIN_NAME = 'event-store-sqlite';

/** The database file: options['event-store-sqlite'].path when a string, else <dataDir>/events.db. */
export function resolveEventStorePath(ctx: PluginContext): string {
  const opts = ctx.config.options[PLUGIN_NAME];
  if (opts && typeof opts === 'object') {
    const p = (opts as { path?: unknown }).path;
    if (typeof p === 'string') return p;
  }
  return path.join(ctx.config.dataDir, 'events.db');
}

const plugin: Plugin = {
  name: PLUGIN_NAME,
  setup(ctx: PluginContext): Teardown {
    const file = resolveEventStorePath(ctx);
    if (file !== ':memory:' && !file.startsWith('file:')) {
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    }
    const maxEventsPerStream = ctx.config.eventsPerAgent ?? DEFAULT_EVENTS_PER_AGENT;
    const store = new SqliteEventStore(file, {
      maxEventsPerStream,
      onCheckpoint: (m) => {
        if (m.type === 'error') ctx.logger.warn({ plugin: PLUGIN_NAME, path: file, err: m.message }, 'checkpointing the event log failed; tried again shortly');
      },
    });
    ctx.provideEventStore(store);
    ctx.logger.info({ plugin: PLUGIN_NAME, path: file, eventsPerAgent: maxEventsPerStream }, 'sqlite event store opened');
    return async () => {
      await store.close();
    };
  },
};

export { SqliteEventStore };
export default plugin;
