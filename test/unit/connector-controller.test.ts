// The connector controller's scheduling, against a real informer fed by hand and a checker that
// answers what the test says: which changes trigger a check, how often a connector is checked
// again (resync while Ready, doubling delays while it fails, capped), and that a secret's change
// re-checks only the connectors that reference it.

import { expect } from 'chai';
import type { Connector, ConnectorPhase } from '../../pkg/api/connector.js';
import type { ConnectorChecker } from '../../pkg/connector/check.js';
import { ConnectorController } from '../../pkg/controller/connector-controller.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { Informer } from '../../pkg/registry/cache/informer.js';
import type { WatchEvent } from '../../pkg/registry/store.js';
import { until } from '../support/waiting.js';

const RESYNC = 100;
const MAX_BACKOFF = 400;

let rv = 0;
const connector = (name: string, url: string, secret?: string): Connector => ({
  apiVersion: 'agentplane.io/v1alpha1',
  kind: 'Connector',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(++rv), generation: 1, creationTimestamp: '' },
  spec: { service: '', displayName: '', url, authType: 'bearer', ...(secret ? { authSecretName: secret, authSecretKey: 'token' } : {}) },
  status: { phase: 'Unknown', message: '' },
});

describe('ConnectorController', function () {
  this.timeout(10_000);
  let emit: (ev: WatchEvent<Connector>) => void;
  let controller: ConnectorController;
  /** Per connector name: when each check ran. */
  let checks: Map<string, number[]>;
  /** What the fake checker finds, per connector name (default Ready). */
  let findings: Map<string, ConnectorPhase>;

  const checksOf = (name: string): number[] => checks.get(name) ?? [];
  const change = (type: WatchEvent<Connector>['type'], c: Connector): void =>
    emit({ type, object: { ...c, metadata: { ...c.metadata, resourceVersion: String(++rv) } } });

  beforeEach(async () => {
    checks = new Map();
    findings = new Map();
    const informer = new Informer<Connector>(
      {
        list: async () => ({ items: [], resourceVersion: String(rv) }),
        watch: (fn) => {
          emit = fn;
          return () => undefined;
        },
      },
      createLogger({ level: 'silent' }),
    );
    const checker = {
      check: async (c: Connector): Promise<ConnectorPhase> => {
        checks.set(c.metadata.name, [...checksOf(c.metadata.name), Date.now()]);
        return findings.get(c.metadata.name) ?? 'Ready';
      },
    } as unknown as ConnectorChecker;
    controller = new ConnectorController({ informer, checker, logger: createLogger({ level: 'silent' }), resyncMs: RESYNC, maxBackoffMs: MAX_BACKOFF });
    await controller.start();
  });
  afterEach(() => controller.stop());

  it('checks a new connector at once, then every resyncMs while Ready', async () => {
    change('ADDED', connector('a', 'http://a.example/mcp'));
    await until('four checks', () => checksOf('a').length >= 4, 5_000);
    const [first, ...rest] = checksOf('a');
    const gaps = rest.map((t, i) => t - (i === 0 ? first : rest[i - 1]));
    for (const g of gaps) expect(g).to.be.within(RESYNC - 5, RESYNC * 4);
  });

  it('backs off a failing connector, doubling up to maxBackoffMs', async () => {
    findings.set('down', 'Unreachable');
    change('ADDED', connector('down', 'http://down.example/mcp'));
    await until('five checks', () => checksOf('down').length >= 5, 5_000);
    const t = checksOf('down');
    const gaps = t.slice(1).map((x, i) => x - t[i]);
    // 100, 200, 400, 400: each at least the planned delay, never more than the cap by much.
    expect(gaps[0]).to.be.at.least(RESYNC - 5);
    expect(gaps[1]).to.be.at.least(2 * RESYNC - 5);
    expect(gaps[2]).to.be.at.least(MAX_BACKOFF - 5);
    expect(gaps[3]).to.be.within(MAX_BACKOFF - 5, MAX_BACKOFF * 3);
  });

  it('a status-only or display change triggers no check; a URL change does', async () => {
    findings.set('b', 'Error'); // backoff keeps periodic checks out of the way for a while
    const b = connector('b', 'http://b.example/mcp');
    change('ADDED', b);
    await until('first check', () => checksOf('b').length === 1, 5_000);
    change('MODIFIED', { ...b, spec: { ...b.spec, displayName: 'B' }, status: { phase: 'Error', message: 'x' } });
    await new Promise((r) => setTimeout(r, RESYNC / 2));
    expect(checksOf('b')).to.have.length(1);
    change('MODIFIED', { ...b, spec: { ...b.spec, url: 'http://b2.example/mcp' } });
    await until('check after the URL change', () => checksOf('b').length === 2, 5_000);
  });

  it('a secret change re-checks only the connectors that reference it', async () => {
    findings.set('s1', 'SecretMissing');
    findings.set('s2', 'SecretMissing');
    change('ADDED', connector('s1', 'http://s.example/mcp', 'tok'));
    change('ADDED', connector('s2', 'http://s.example/mcp', 'other'));
    await until('first checks', () => checksOf('s1').length === 1 && checksOf('s2').length === 1, 5_000);
    controller.secretChanged('default', 'tok');
    await until('s1 re-checked', () => checksOf('s1').length === 2, 5_000);
    expect(checksOf('s2')).to.have.length(1);
  });

  it('a deleted connector is checked no more', async () => {
    const d = connector('d', 'http://d.example/mcp');
    change('ADDED', d);
    await until('first check', () => checksOf('d').length === 1, 5_000);
    change('DELETED', d);
    await new Promise((r) => setTimeout(r, RESYNC * 3));
    expect(checksOf('d')).to.have.length(1);
  });
});
