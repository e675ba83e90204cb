// A connector check and how its finding becomes the connector's status. The connector controller
// runs it (after any change of a connector or its secret, and periodically); GET .../tools, which
// asks the server anyway, records what it found through `recordListing` too. Only these write
// connector status.

import type { Connector, ConnectorPhase, ConnectorStatus } from '../api/connector.js';
import { ApiError } from '../api/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Registry } from '../registry/registry.js';
import type { ConnectorAccess, ConnectorAuth } from './access.js';
import type { ToolListing } from './mcp-tools.js';

/** What a check depends on: a connector whose other fields changed is as reachable as before. */
export const probeInputs = (c: Connector): string => {
  const { url, authSecretName, authSecretKey, authType, headerName } = c.spec;
  return JSON.stringify([c.metadata.uid, url, authSecretName ?? '', authSecretKey ?? '', authType, headerName ?? '']);
};

export class ConnectorChecker {
  constructor(
    private readonly connectors: Registry<Connector>,
    readonly access: ConnectorAccess,
    private readonly log: Logger,
  ) {}

  /** Checks the connector now and records the outcome in its status; returns the phase found. */
  async check(c: Connector, signal?: AbortSignal): Promise<ConnectorPhase> {
    const auth = await this.access.auth(c);
    if (!auth.ok) {
      await this.record(c, { phase: auth.phase, message: auth.message });
      return auth.phase;
    }
    const listing = await this.access.listTools(c, auth, signal);
    // A check cut short by shutdown found nothing about the connector.
    if (signal?.aborted) return 'Unknown';
    await this.recordListing(c, listing);
    return listing.ok ? 'Ready' : listing.phase;
  }

  /** Records what `auth` refused. */
  recordRefusal(c: Connector, auth: Extract<ConnectorAuth, { ok: false }>): Promise<void> {
    return this.record(c, { phase: auth.phase, message: auth.message });
  }

  /** Records what a tools/list found. */
  recordListing(c: Connector, listing: ToolListing): Promise<void> {
    if (!listing.ok) return this.record(c, { phase: listing.phase, message: listing.message });
    const n = listing.tools.length;
    return this.record(c, { phase: 'Ready', message: `${n} tool${n === 1 ? '' : 's'} available`, toolCount: n });
  }

  private async record(c: Connector, next: Omit<ConnectorStatus, 'lastCheckedAt'>): Promise<void> {
    const { namespace, name } = c.metadata;
    const checked = probeInputs(c);
    try {
      let before: ConnectorPhase | undefined;
      await this.connectors.updateStatus(namespace, name, (s, obj) => {
        // A check of another URL or credential (or an earlier connector of that name) must not
        // overwrite what a check of the current one found.
        if (probeInputs(obj) !== checked) return;
        before = s.phase;
        s.phase = next.phase;
        s.message = next.message;
        if (next.toolCount !== undefined) s.toolCount = next.toolCount;
        else delete s.toolCount;
        s.lastCheckedAt = new Date().toISOString();
      });
      if (before !== undefined && before !== next.phase) {
        const line = { namespace, connector: name, phase: next.phase, message: next.message };
        if (next.phase === 'Ready') this.log.info(line, 'connector status changed');
        else this.log.warn(line, 'connector status changed');
      }
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
    }
  }
}
