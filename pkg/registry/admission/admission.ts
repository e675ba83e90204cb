// Admission, as in kube-apiserver: named plugins the registry runs on every write, whoever the
// writer is (the REST mirror, the aggregated API, a reconciler). Every rule that spans objects
// (a connector exists, a connector is in use, squad membership, where a secret may be sent)
// lives in exactly one plugin file here, so both APIs cannot disagree.
//
// Order of a write: the strategy's defaults, then the mutating plugins (`admit`), then the
// strategy's validation, then the validating plugins (`validate`), then storage. A validating
// plugin that changes other objects (a squad claiming its members) returns an undo, run when a
// later plugin refuses or storage fails.

import { childSpan } from '../../observability/tracing.js';
import type { StoredObject } from '../store.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface Attributes<T extends StoredObject = StoredObject> {
  operation: Operation;
  kind: string;
  namespace: string;
  name: string;
  /** The object as it would be stored (CREATE, UPDATE); mutating plugins may change it. */
  object?: T;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: T;
  /** Check only: change nothing anywhere (Kubernetes' dryRun=All). */
  dryRun: boolean;
}

/** Undoes what a validating plugin changed elsewhere when the write does not happen after all. */
export type Undo = () => Promise<void>;

export interface AdmissionPlugin {
  readonly name: string;
  /** The kinds it applies to. */
  readonly kinds: readonly string[];
  readonly operations: readonly Operation[];
  /** Mutating phase: may change `a.object`. */
  admit?(a: Attributes): Promise<void> | void;
  /** Validating phase: throws an ApiError to refuse. */
  validate?(a: Attributes): Promise<Undo | void> | Undo | void;
}

/** An admission phase's span (docs/tracing.md), inside the traced request that writes. */
const spanAttributes = (a: Attributes, phase: string): Record<string, string> => ({
  'agentplane.admission.phase': phase,
  'agentplane.kind': a.kind,
  'agentplane.operation': a.operation,
  'agentplane.namespace': a.namespace,
  'agentplane.object': a.name,
});

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[] = [];

  register(...plugins: AdmissionPlugin[]): this {
    for (const p of plugins) {
      if (this.plugins.some((q) => q.name === p.name)) throw new Error(`admission plugin "${p.name}" is registered twice`);
      this.plugins.push(p);
    }
    return this;
  }

  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  async admit(a: Attributes): Promise<void> {
    await childSpan('agentplane.admission', spanAttributes(a, 'mutating'), async () => {
      for (const p of this.matching(a)) await p.admit?.(a);
    });
  }

  /** Runs the validating plugins; on refusal, undoes what earlier ones changed. Returns the undo of all. */
  validate(a: Attributes): Promise<Undo> {
    return childSpan('agentplane.admission', spanAttributes(a, 'validating'), () => this.validateAll(a));
  }

  private async validateAll(a: Attributes): Promise<Undo> {
    const undos: Undo[] = [];
    const undoAll: Undo = async () => {
      for (const u of undos.splice(0).reverse()) await u();
    };
    try {
      for (const p of this.matching(a)) {
        const undo = await p.validate?.(a);
        if (undo) undos.push(undo);
      }
    } catch (err) {
      await undoAll();
      throw err;
    }
    return undoAll;
  }

  private matching(a: Attributes): AdmissionPlugin[] {
    return this.plugins.filter((p) => p.kinds.includes(a.kind) && p.operations.includes(a.operation));
  }
}

/** What a plugin reads of other objects: an informer's cache, or the registry itself. */
export interface Reader<T> {
  get(namespace: string, name: string): T | undefined | Promise<T | undefined>;
  list(namespace: string): T[] | Promise<T[]>;
}

/** A Reader over anything that gets and lists like the Registry (storage reads). */
export function storageReader<T>(r: {
  get(namespace: string, name: string): Promise<T | undefined>;
  list(filter: { namespace: string }): Promise<{ items: T[] }>;
}): Reader<T> {
  return { get: (ns, name) => r.get(ns, name), list: async (ns) => (await r.list({ namespace: ns })).items };
}

/**
 * A Reader over an informer's cache that asks storage when the cache does not have the object
 * (yet): the cache may lag a write acknowledged a moment ago, and an existence check must not
 * refuse an object that exists. Lists come from storage, exact.
 */
export function readThrough<T>(cache: { get(namespace: string, name: string): T | undefined }, storage: Parameters<typeof storageReader<T>>[0]): Reader<T> {
  const exact = storageReader(storage);
  return { get: (ns, name) => cache.get(ns, name) ?? exact.get(ns, name), list: (ns) => exact.list(ns) };
}
