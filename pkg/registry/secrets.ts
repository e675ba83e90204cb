// The secret store interface. Secrets hold connector tokens; their values are read only inside
// the service (when a task is dispatched, when a connector is checked) and never returned.
// Embedded home: files under <dataDir>/secrets (file-secret-store.ts); cluster home: Kubernetes
// Secrets behind the same interface.

export interface SecretMeta {
  name: string;
  namespace: string;
  /** Sorted. */
  keys: string[];
  /** Normalized URL prefixes the values may be sent to; [] until bound (then sent nowhere). */
  allowedUrls: string[];
  createdAt: string;
}

export interface Secret extends SecretMeta {
  data: Record<string, string>;
}

export interface SecretStore {
  /** Creates the secret; AlreadyExists when the name is taken. `allowedUrls` normalized; absent or [] = unbound. */
  put(namespace: string, name: string, data: Record<string, string>, allowedUrls?: string[]): Promise<SecretMeta>;
  /**
   * Creates or replaces the whole secret (createdAt is kept on replace). `allowedUrls` undefined
   * keeps the current binding (unbound when created).
   */
  replace(namespace: string, name: string, data: Record<string, string>, allowedUrls?: string[]): Promise<{ secret: SecretMeta; created: boolean }>;
  /**
   * Binding on first use: sets allowedUrls to [prefix] when the secret is unbound, atomically
   * with other writes of it. Returns the secret as it is after (bound by this call or before);
   * undefined when absent.
   */
  bindIfUnbound(namespace: string, name: string, prefix: string): Promise<SecretMeta | undefined>;
  /** Internal only: the values. Never hand the result to a response, an event or a log. */
  get(namespace: string, name: string): Promise<Secret | undefined>;
  /** All secrets, or those of one namespace; names and keys only. */
  list(namespace?: string): Promise<SecretMeta[]>;
  /** Removes the secret; returns what it was (without values), undefined when absent. */
  delete(namespace: string, name: string): Promise<SecretMeta | undefined>;
}

export const secretMeta = (s: Secret): SecretMeta => ({
  name: s.name,
  namespace: s.namespace,
  keys: Object.keys(s.data).sort(),
  allowedUrls: [...s.allowedUrls],
  createdAt: s.createdAt,
});
