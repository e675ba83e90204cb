// The store's Prometheus metrics, on the service's registry: latency per operation and outcome,
// and reconnects per connection. Named agentplane_event_store_* with a `store` label, so another
// shared store can report under the same names.

import { Counter, Histogram } from 'prom-client';

import type { Metrics } from '../../pkg/plugin/types.js';
import type { StoreObserver } from './redis-event-store.js';

export function storeMetrics(metrics: Metrics, store = 'redis'): StoreObserver {
  const duration = new Histogram({
    name: 'agentplane_event_store_operation_duration_seconds',
    help: 'Event store operations by store, operation (append, list, since, taskStart, lastSeq, deleteStream, ping) and outcome (ok, error).',
    labelNames: ['store', 'operation', 'outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });
  const reconnects = new Counter({
    name: 'agentplane_event_store_reconnects_total',
    help: 'Reconnection attempts of the event store by store and connection (commands, follow).',
    labelNames: ['store', 'connection'] as const,
    registers: [metrics.registry],
  });
  return {
    operation: (operation, seconds, ok) => duration.observe({ store, operation, outcome: ok ? 'ok' : 'error' }, seconds),
    reconnect: (connection) => reconnects.inc({ store, connection }),
  };
}
