// Watch: newline-delimited JSON WatchEvents over a streamed response.
//  - resourceVersion unset, "" or "0": synthetic ADDED for the current objects, then changes;
//  - resourceVersion=N: every change after N; too old: an in-stream ERROR event with a 410
//    Expired Status, then the end of the stream (clients list again);
//  - sendInitialEvents=true (WatchList, needs resourceVersionMatch=NotOlderThan): synthetic ADDED,
//    then, with allowWatchBookmarks, a BOOKMARK annotated k8s.io/initial-events-end: "true";
//  - allowWatchBookmarks=true: a BOOKMARK with the latest resourceVersion every interval and just
//    before a timeout; timeoutSeconds ends the stream (default: 30 to 60 minutes, as kube);
//  - selectors apply to events: an object that stops matching leaves as DELETED, one that starts
//    matching arrives as ADDED (when the client's view is known, i.e. after initial events).
// Parameters are checked before the response starts, so a bad request is a plain Status error.

import { type ApiError, internalError, invalid, isApiError, toStatus } from '../../api/errors.js';
import { API_VERSION, GROUP } from '../../api/meta.js';
import type { StoredObject, WatchEvent } from '../../registry/store.js';
import { negotiate } from './negotiation.js';
import { boolParam, checkListOptions, includeObject, intParam, type Query, single } from './query.js';
import { partialObject, table } from './render.js';
import type { ResourceDef } from './resources.js';
import { selection } from './selection.js';

export const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;
const MIN_REQUEST_TIMEOUT_S = 1800;
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export interface WatchRequest {
  def: ResourceDef;
  namespace?: string;
  /** Watch of one object (the /watch/.../<name> path): a metadata.name field selector. */
  name?: string;
  query: Query;
  accept?: string;
}

/** Where a watch writes: one line per event. */
export interface WatchSink {
  write(line: string): void;
  end(): void;
  onClose(fn: () => void): void;
}

type EventType = WatchEvent<StoredObject>['type'] | 'BOOKMARK' | 'ERROR';

/** Validates the request; the returned function streams the watch into a sink. */
export function prepareWatch(r: WatchRequest, opts: { bookmarkIntervalMs?: number } = {}): (sink: WatchSink) => Promise<void> {
  const o = watchOptions(r, opts);
  return (sink) => runWatch(r, o, sink);
}

type WatchOptions = ReturnType<typeof watchOptions>;

/** The request's watch options, checked as kube-apiserver checks them. */
function watchOptions(r: WatchRequest, opts: { bookmarkIntervalMs?: number }) {
  const { def, query: q, namespace } = r;
  const target = negotiate(r.accept, ['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
  const inc = includeObject(q);
  checkListOptions(q);
  const sel = selection(def, q, namespace, r.name);
  const rv = single(q, 'resourceVersion') ?? '';
  const bookmarks = boolParam(q, 'allowWatchBookmarks') ?? false;
  const timeoutSeconds = intParam(q, 'timeoutSeconds', { min: 0 }) || MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
  const sendInitial = boolParam(q, 'sendInitialEvents');
  const match = single(q, 'resourceVersionMatch');
  if (sendInitial !== undefined && match !== 'NotOlderThan') {
    throw invalid('ListOptions', undefined, [
      { field: 'resourceVersionMatch', message: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' },
    ]);
  }
  if (match && sendInitial === undefined) {
    throw invalid('ListOptions', undefined, [{ field: 'resourceVersionMatch', message: 'is forbidden for watch unless sendInitialEvents is provided' }]);
  }
  if (match && match !== 'NotOlderThan') {
    throw invalid('ListOptions', undefined, [{ field: 'resourceVersionMatch', message: 'must be one of "NotOlderThan"' }]);
  }
  const initial = sendInitial ?? (rv === '' || rv === '0');
  const bookmarkMs = opts.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS;
  return { target, inc, sel, rv, bookmarks, timeoutSeconds, sendInitial, initial, bookmarkMs };
}

/** Streams the watch: the initial state when asked, then the store's events, bookmarks, the timeout. */
async function runWatch(r: WatchRequest, o: WatchOptions, sink: WatchSink): Promise<void> {
  const { def, namespace } = r;
  const { target, inc, sel, rv, bookmarks, timeoutSeconds, sendInitial, initial, bookmarkMs } = o;
  let closed = false;
  let first = true;
  let lastRv = rv;
  let unsubscribe: (() => void) | undefined;
  const timers: NodeJS.Timeout[] = [];
  const stop = (): void => {
    closed = true;
    unsubscribe?.();
    timers.forEach((t) => clearInterval(t));
  };
  const finish = (): void => {
    if (closed) return;
    stop();
    sink.end();
  };
  sink.onClose(stop);

  const write = (type: EventType, object: unknown): void => {
    if (!closed) sink.write(`${JSON.stringify({ type, object })}\n`);
  };
  const render = (obj: StoredObject): unknown => {
    if (target.as === 'Table') {
      const t = table(def, [obj], { version: target.version, includeObject: inc, noHeaders: !first });
      first = false;
      return t;
    }
    return target.as === 'object' ? obj : partialObject(obj, target.version);
  };
  const bookmark = (annotations?: Record<string, string>): void => {
    const metadata = { resourceVersion: lastRv, ...(annotations ? { annotations } : {}) };
    if (target.as === 'Table') write('BOOKMARK', { kind: 'Table', apiVersion: `meta.k8s.io/${target.version}`, metadata, columnDefinitions: [], rows: [] });
    else if (target.as === 'object') write('BOOKMARK', { kind: def.kind, apiVersion: API_VERSION, metadata });
    else write('BOOKMARK', { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${target.version}`, metadata });
  };
  const fail = (err: unknown): void => {
    write('ERROR', toStatus(isApiError(err) ? err : internalError(), GROUP));
    finish();
  };

  // What the client holds, to turn selector transitions into ADDED/DELETED. Only exact when
  // the stream began with the initial state; after a resume the earlier state is unknown.
  const known = new Set<string>();
  const key = (o: StoredObject): string => `${o.metadata.namespace}/${o.metadata.name}`;
  let knownExact = false;
  const onEvent = (ev: WatchEvent<StoredObject>): void => {
    const obj = ev.object;
    lastRv = obj.metadata.resourceVersion || lastRv;
    const k = key(obj);
    const had = known.has(k);
    const now = ev.type !== 'DELETED' && sel.matches(obj);
    if (ev.type === 'DELETED') {
      if (had || sel.matches(obj)) write('DELETED', render(obj));
      known.delete(k);
    } else if (now) {
      known.add(k);
      write(ev.type === 'ADDED' || (knownExact && !had) ? 'ADDED' : 'MODIFIED', render(obj));
    } else if (had) {
      known.delete(k);
      write('DELETED', render(obj));
    }
  };

  try {
    let from = rv;
    if (initial || rv === '') {
      const list = await def.registry.list(namespace !== undefined ? { namespace } : {});
      if (closed) return;
      from = lastRv = list.resourceVersion;
      knownExact = true;
      if (initial) {
        for (const obj of list.items) {
          if (!sel.matches(obj)) continue;
          known.add(key(obj));
          write('ADDED', render(obj));
        }
      }
      if (sendInitial === true && bookmarks) bookmark({ [INITIAL_EVENTS_END]: 'true' });
    }
    unsubscribe = def.registry.watch(onEvent, { resourceVersion: from, onError: (err: ApiError) => fail(err) });
    if (closed) unsubscribe();
  } catch (err) {
    fail(err);
    return;
  }

  if (bookmarks) timers.push(setInterval(() => bookmark(), bookmarkMs).unref());
  timers.push(
    setTimeout(() => {
      if (bookmarks) bookmark();
      finish();
    }, timeoutSeconds * 1000).unref(),
  );
}
