// The model proxy: per-agent model credentials, the credential-injecting Messages API proxy,
// token counting and retries. See docs/security.md "Model proxy".

export { CREDENTIAL_PREFIX, CredentialRegistry, type ModelGrant } from './credentials.js';
export { UsageMeter } from './meter.js';
export { TurnGate } from './turn-gate.js';
export { DEFAULT_UPSTREAM, ModelProxy, type ModelProxyEvents, type ModelProxyOptions } from './proxy.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export { type TokenUsage, UsageTap } from './usage.js';
export { MODEL_PROXY_PATH } from '../api/worker-protocol.js';
export { ModelReports } from './reports.js';
export type { GrantAuthenticator, UsageSink } from './proxy.js';
export { startSidecar, type SidecarOptions } from './sidecar.js';
