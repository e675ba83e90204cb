// The model credential, stored once as a Secret in the install namespace, mirrored into every
// namespace that has agents: a Secret of the same name and data, labelled
// app.kubernetes.io/managed-by=agentplane, agentplane.io/component=model-credential and
// agentplane.io/mirrored-from=<install namespace>.
//
// Level-triggered, one reconcile per namespace (a controller from the plugin context): the
// namespace should hold a mirror iff the source exists and the namespace has agents (any agent
// object, including one being deleted, whose worker may still run). Three watches feed it: the
// agents informer (a namespace gains or loses agents), the source Secret (a rotation reaches
// every mirror, a deleted source removes them all) and the mirrors themselves (one edited or
// deleted by hand is restored, one left behind is removed). A periodic resync re-checks every
// namespace, for what no watch reports (a foreign Secret in the way was removed).
//
// A Secret of the mirror's name that agentplane did not make (no mirrored-from label) is never
// overwritten or deleted: the namespace is reported as blocked (a warning naming it, a metric)
// and checked again later.
//
// No value reaches a log line, an error message or a metric label: lines name namespaces,
// Secrets and keys; Kubernetes' answers are reduced to their status line, and any text that
// leaves this plugin passes through a filter that blanks the current values (and their base64,
// ./redaction.ts). The watches are kept running by ./keep-watching.ts; the mirror Secret's shape
// is ./mirror-secret.ts.

import { CoreV1Api, ListWatch, type KubernetesListObject, type V1Secret } from '@kubernetes/client-node';
import type { Counter } from 'prom-client';
import { onlyMessageMoved } from '../../pkg/api/agent.js';
import type { ObjectRef } from '../../pkg/api/meta.js';
import { MANAGED_BY, MANAGED_BY_LABEL, MIRRORED_FROM_LABEL } from '../../pkg/api/secret.js';
import type { ClusterAccess, Controller, Logger, PluginContext, Result } from '../../pkg/plugin/types.js';
import { BoundedWatch } from './bounded-watch.js';
import { keepWatching, type WatchKeeping } from './keep-watching.js';
import { syncCounter } from './metrics.js';
import { codeOf, desiredMirror, isMirror, repairedMirror, sameMirror } from './mirror-secret.js';
import { describeFailure } from './redaction.js';

export const DEFAULT_SECRET_NAME = 'agentplane-model';
/** How often every namespace is checked again, whatever the watches said. */
const RESYNC_MS = 5 * 60_000;
/** A namespace where a foreign Secret holds the mirror's name is checked again this often. */
const BLOCKED_RECHECK_MS = 30_000;
/** Conditional writes that lost a race are retried at once this many times, then by the queue. */
const WRITE_ATTEMPTS = 3;

export interface CredentialMirrorOptions {
  /** The source Secret's name in the install namespace, and the mirrors' name. */
  secretName: string;
  /** How often every namespace is reconciled regardless of events (default 5 minutes). */
  resyncMs?: number;
}

type Outcome = 'created' | 'updated' | 'deleted' | 'blocked';

export class CredentialMirror {
  private readonly core: CoreV1Api;
  private readonly installNamespace: string;
  private readonly secretName: string;
  private readonly controller: Controller;
  private readonly source: ListWatch<V1Secret>;
  private readonly mirrors: ListWatch<V1Secret>;
  private readonly mirrorSelector: string;
  private readonly syncs: Counter<'outcome'>;
  private readonly resyncMs: number;
  /** Resolves true once both Secret caches hold their first list; false when stopped first. */
  private readonly synced: Promise<boolean>;
  private markSynced!: (ok: boolean) => void;
  private started = false;
  private stopped = false;
  private resync?: NodeJS.Timeout;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Foreign Secrets already warned about (namespace/uid/resourceVersion), so a warning is said once. */
  private readonly warned = new Set<string>();
  /** The caches (source, mirrors) that have listed at least once. */
  private readonly listed = new Set<string>();

  constructor(
    private readonly ctx: PluginContext,
    cluster: ClusterAccess,
    opts: CredentialMirrorOptions,
    private readonly log: Logger,
  ) {
    this.installNamespace = cluster.installNamespace;
    this.secretName = opts.secretName;
    this.resyncMs = opts.resyncMs ?? RESYNC_MS;
    this.core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    this.synced = new Promise((res) => (this.markSynced = res));
    const watch = new BoundedWatch(cluster.kubeConfig);

    // The source: one Secret, by name, in the install namespace.
    const nameSelector = `metadata.name=${this.secretName}`;
    this.source = new ListWatch<V1Secret>(
      `/api/v1/namespaces/${this.installNamespace}/secrets`,
      watch,
      this.listing('source', () => this.core.listNamespacedSecret({ namespace: this.installNamespace, fieldSelector: nameSelector })),
      false,
      undefined,
      nameSelector,
    );
    // The mirrors of this installation, in every namespace (of any name: one left under an
    // earlier secretName is removed).
    this.mirrorSelector = `${MANAGED_BY_LABEL}=${MANAGED_BY},${MIRRORED_FROM_LABEL}=${this.installNamespace}`;
    this.mirrors = new ListWatch<V1Secret>(
      '/api/v1/secrets',
      watch,
      this.listing('mirrors', () => this.core.listSecretForAllNamespaces({ labelSelector: this.mirrorSelector })),
      false,
      this.mirrorSelector,
    );

    this.syncs = syncCounter(ctx);
    this.controller = ctx.controller({ name: 'credential-mirror', reconcile: (ref) => this.reconcile(ref) });
    // A namespace gains or loses agents.
    this.controller.watch(ctx.informers.agents, (a) => [this.ref(a.metadata.namespace)], { ignoreUpdate: onlyMessageMoved });
    // The source changed (rotated, created, deleted): every namespace that has agents or mirrors.
    this.source.on('change', () => this.enqueueAll());
    // A mirror changed (edited or deleted by hand, or our own write arriving): its namespace.
    this.mirrors.on('change', (s) => {
      if (s.metadata?.namespace) this.controller.enqueue(this.ref(s.metadata.namespace));
    });
  }

  /** What keepWatching needs of the mirror. */
  private keeping(): WatchKeeping {
    return {
      log: this.log,
      stopped: () => this.stopped,
      listed: (what) => this.listed.has(what),
      wait: (ms) =>
        new Promise((res) => {
          const t = setTimeout(() => (this.timers.delete(t), res()), ms);
          this.timers.add(t);
        }),
      describe: (err) => this.describe(err),
    };
  }

  /** Starts the Secret watches (once); reconciles wait until both have listed. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    void Promise.all([keepWatching(this.source, 'source', this.keeping()), keepWatching(this.mirrors, 'mirrors', this.keeping())]).then((ok) => {
      if (ok.every(Boolean)) {
        this.log.info({ source: `${this.installNamespace}/${this.secretName}`, present: !!this.sourceSecret() }, 'watching the model credential');
        this.markSynced(true);
        this.enqueueAll();
      }
    });
    this.resync = setInterval(() => this.enqueueAll(), this.resyncMs);
    this.resync.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.markSynced(false);
    clearInterval(this.resync);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([this.source.stop(), this.mirrors.stop()]);
  }

  private ref(namespace: string): ObjectRef {
    return { namespace, name: this.secretName };
  }

  private enqueueAll(): void {
    const namespaces = new Set<string>();
    for (const a of this.ctx.informers.agents.list()) namespaces.add(a.metadata.namespace);
    for (const m of this.mirrors.list()) if (m.metadata?.namespace) namespaces.add(m.metadata.namespace);
    for (const ns of namespaces) this.controller.enqueue(this.ref(ns));
  }

  private sourceSecret(): V1Secret | undefined {
    return this.source.get(this.secretName, this.installNamespace);
  }

  /** The namespace holds a mirror iff the source exists and the namespace has agents. */
  private async reconcile(ref: ObjectRef): Promise<Result | void> {
    if (!(await this.synced) || this.stopped) return;
    const ns = ref.namespace;
    // The source's own namespace needs no copy (and the source is never written here).
    if (ns === this.installNamespace) return;
    const source = this.sourceSecret();
    const wanted = !!source && this.ctx.informers.agents.list(ns).length > 0;
    try {
      for (const m of this.mirrors.list(ns)) {
        if (!wanted || m.metadata?.name !== this.secretName)
          await this.remove(m, wanted ? 'left under another name' : source ? 'no agents left in the namespace' : 'the source was deleted');
      }
      if (!wanted) return;
      return await this.ensure(ns, source);
    } catch (err) {
      // The queue logs the message and retries with backoff: only a filtered one leaves here.
      throw new Error(this.describe(err), { cause: err });
    }
  }

  /** Creates or repairs the namespace's mirror. */
  private async ensure(ns: string, source: V1Secret): Promise<Result | void> {
    const want = desiredMirror(this.secretName, ns, this.installNamespace, source);
    let cur = this.mirrors.get(this.secretName, ns);
    for (let attempt = 1; ; attempt++) {
      if (!cur) {
        try {
          await this.core.createNamespacedSecret({ namespace: ns, body: want });
          this.wrote('created', ns, source, 'mirror created');
          return;
        } catch (err) {
          // Taken: by a mirror this cache has not seen yet, or by a Secret that is not ours.
          if (codeOf(err) !== 409 || attempt >= WRITE_ATTEMPTS) throw err;
          cur = await this.read(ns);
          if (!cur) continue;
        }
      }
      if (!isMirror(cur, this.installNamespace)) return this.blocked(ns, cur);
      if (sameMirror(cur, want)) return;
      try {
        if ((cur.type ?? 'Opaque') !== 'Opaque' || cur.immutable) {
          // Neither a type nor an immutable Secret's data can change: remove the mirror (the one
          // read, nothing else) and make it again.
          await this.deleteExactly(cur);
          cur = undefined;
          continue;
        }
        await this.core.replaceNamespacedSecret({ namespace: ns, name: this.secretName, body: repairedMirror(cur, want) });
        this.wrote('updated', ns, source, 'mirror updated to the source');
        return;
      } catch (err) {
        const code = codeOf(err);
        if ((code !== 409 && code !== 404) || attempt >= WRITE_ATTEMPTS) throw err;
        cur = await this.read(ns);
      }
    }
  }

  /** Deletes a mirror of ours, exactly as cached (a Secret changed since is judged again). */
  private async remove(m: V1Secret, why: string): Promise<void> {
    if (!isMirror(m, this.installNamespace)) return;
    try {
      await this.deleteExactly(m);
    } catch (err) {
      if (codeOf(err) === 404) return;
      throw err;
    }
    this.syncs.inc({ outcome: 'deleted' });
    this.log.info({ namespace: m.metadata!.namespace, secret: m.metadata!.name, reason: why }, 'mirror removed');
  }

  private deleteExactly(s: V1Secret): Promise<unknown> {
    return this.core.deleteNamespacedSecret({
      namespace: s.metadata!.namespace!,
      name: s.metadata!.name!,
      body: { preconditions: { uid: s.metadata!.uid!, resourceVersion: s.metadata!.resourceVersion! } },
    });
  }

  private blocked(ns: string, cur: V1Secret): Result {
    const key = `${ns}/${cur.metadata?.uid}/${cur.metadata?.resourceVersion}`;
    if (!this.warned.has(key)) {
      this.warned.add(key);
      this.syncs.inc({ outcome: 'blocked' });
      this.log.warn(
        { namespace: ns, secret: this.secretName },
        `a Secret of the model credential's name that agentplane did not make (no label ${MIRRORED_FROM_LABEL}=${this.installNamespace}) is in the way: ` +
          `it is left as it is and the namespace's agents get no mirrored credential; delete or rename it`,
      );
    }
    return { requeueAfter: BLOCKED_RECHECK_MS };
  }

  private async read(ns: string): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret({ namespace: ns, name: this.secretName });
    } catch (err) {
      if (codeOf(err) === 404) return undefined;
      throw err;
    }
  }

  private wrote(outcome: Outcome, ns: string, source: V1Secret, msg: string): void {
    this.syncs.inc({ outcome });
    this.log.info(
      { namespace: ns, secret: this.secretName, keys: Object.keys(source.data ?? {}).sort(), sourceVersion: source.metadata?.resourceVersion },
      msg,
    );
  }

  /** Wraps a list call: failures are reported (filtered) and `listed` counts successes. */
  private listing(what: string, list: () => Promise<KubernetesListObject<V1Secret>>): () => Promise<KubernetesListObject<V1Secret>> {
    return async () => {
      const res = await list();
      this.listed.add(what);
      return res;
    };
  }

  /** What may be said of a failure: Kubernetes' status line, never a body; the values blanked. */
  private describe(err: unknown): string {
    return describeFailure(err, this.sourceSecret()?.data ?? {});
  }
}
