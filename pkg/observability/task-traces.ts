// Which span a running task's model requests belong under (docs/tracing.md): the worker names
// its task span on the task's first event (pkg/runtime/channel/hub.ts records it here), and
// the server's model proxy, which sees each request's agent but not its worker's spans, parents
// the request's span on it. In this process only: a replica that did not receive the task's
// events (high availability) records the model request in no trace.

const MAX_TASKS = 10_000;

interface Entry {
  task: number;
  traceparent: string;
}

const byAgent = new Map<string, Entry>();
const key = (ref: { namespace: string; name: string }): string => `${ref.namespace}/${ref.name}`;

export const taskTraces = {
  set(ref: { namespace: string; name: string }, task: number, traceparent: string): void {
    const k = key(ref);
    byAgent.delete(k); // re-inserted last: the oldest entry is the first dropped
    if (byAgent.size >= MAX_TASKS) byAgent.delete(byAgent.keys().next().value!);
    byAgent.set(k, { task, traceparent });
  },
  /** The running task's span, if its worker named one. */
  get(ref: { namespace: string; name: string }): string | undefined {
    return byAgent.get(key(ref))?.traceparent;
  },
  /** The task ended: later requests (another task's) are not parented on it. */
  end(ref: { namespace: string; name: string }, task: number): void {
    if (byAgent.get(key(ref))?.task === task) byAgent.delete(key(ref));
  },
};
