// The names of the runtimes and model-proxy placements, apart from runtimes.ts so that the CLI's
// flag table can check them without loading the runtimes (and the Kubernetes client).

export type RuntimeKind = 'local' | 'kubernetes';
/** Where pods' engines reach the model: a sidecar in each pod, or the server's proxy. */
export type ModelProxyMode = 'sidecar' | 'server';
export const MODEL_PROXY_MODES: readonly ModelProxyMode[] = ['sidecar', 'server'];
export const RUNTIME_KINDS: readonly RuntimeKind[] = ['local', 'kubernetes'];
