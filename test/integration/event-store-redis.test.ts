// The Redis event store against a real redis-server (started here on a free loopback port): the
// shared conformance suite, plus what only a shared store has to get right: keys namespaced and
// escaped, auth, TLS, live follow across processes (two stores, two connections), reconnect
// after a Redis restart, readiness and metrics of a real agentplane server using it.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import type { AgentEvent, EventDraft } from '../../pkg/api/event.js';
import { Metrics } from '../../pkg/observability/metrics.js';
import { EventLog } from '../../pkg/registry/event-log.js';
import type { StreamRef } from '../../pkg/registry/events.js';
import { followEvents } from '../../pkg/server/event-follow.js';
import plugin from '../../plugins/event-store-redis/index.js';
import { escapeKeyPart, streamKeys } from '../../plugins/event-store-redis/keys.js';
import { storeMetrics } from '../../plugins/event-store-redis/metrics.js';
import { redactUrl, resolveRedisSettings } from '../../plugins/event-store-redis/options.js';
import { RedisEventStore, type RedisEventStoreOptions } from '../../plugins/event-store-redis/redis-event-store.js';
import { eventStoreConformance } from '../conformance/event-store.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { testPluginContext } from '../support/plugin-context.js';
import { type RedisServer, startRedisServer } from '../support/redis-server.js';
import { makeServingCert } from '../support/tls.js';

const text = (content: string): EventDraft<'text'> => ({ type: 'text', payload: { content } });
const contentOf = (e: AgentEvent): string => (e.payload as { content: string }).content;

let prefixes = 0;
/** A key prefix of its own per store, so cases never share a name's seq counter. */
const freshPrefix = (): string => `t${process.pid}-${++prefixes}`;

const stores: RedisEventStore[] = [];
/** A store on `url` (closed after the case), connected. */
/** Waits until the store's ping (its readiness) fails with a message `why` accepts. */
function pingFails(store: RedisEventStore, why: (message: string) => boolean, what: string): Promise<unknown> {
  return eventually(
    async () => {
      try {
        await store.ping();
        return false;
      } catch (err) {
        return why((err as Error).message);
      }
    },
    5_000,
    what,
  );
}

async function openStore(url: string, more: Partial<RedisEventStoreOptions> = {}): Promise<RedisEventStore> {
  const store = new RedisEventStore({ connection: { url }, keyPrefix: freshPrefix(), ...more });
  stores.push(store);
  await store.ready();
  return store;
}
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe('RedisEventStore (integration, real redis-server)', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await redis?.close();
  });

  const fixture = async (max?: number) => {
    const store = new RedisEventStore({ connection: { url: redis.url }, keyPrefix: freshPrefix(), ...(max !== undefined ? { maxEventsPerStream: max } : {}) });
    await store.ready();
    return { store, cleanup: () => store.close() };
  };
  eventStoreConformance('RedisEventStore', () => fixture(), { capped: (max) => fixture(max) });

  describe('keys', () => {
    it('escapes namespace, name and uid so that no two refs share a key', () => {
      expect(escapeKeyPart('my-agent.v2')).to.equal('my-agent.v2');
      expect(escapeKeyPart('a:b{c}/%')).to.equal('a%3Ab%7Bc%7D%2F%25');
      expect(escapeKeyPart('ü')).to.equal('%C3%BC');
      const refs: StreamRef[] = [
        { namespace: 'a:b', name: 'c', uid: 'u' },
        { namespace: 'a', name: 'b:c', uid: 'u' },
        { namespace: 'a', name: 'b%3Ac', uid: 'u' },
        { namespace: 'a/b', name: 'c', uid: 'u' },
        { namespace: 'a', name: 'b/c', uid: 'u' },
        { namespace: 'a', name: 'b', uid: 'c:u' },
        { namespace: 'a', name: 'b:c', uid: 'u:events' },
      ];
      // Each ref its own stream and task keys; each (namespace, name) its own counter.
      const perStream = refs.flatMap((r) => {
        const k = streamKeys('p', r);
        return [k.events, k.taskFirst, k.taskLast];
      });
      const counters = [...new Map(refs.map((r) => [`${r.namespace} ${r.name}`, streamKeys('p', r).counter])).values()];
      const all = [...perStream, ...counters];
      expect(counters).to.have.length(6);
      expect(new Set(all).size).to.equal(all.length);
    });

    it('puts every key of one name in one hash tag, and nothing else in braces', () => {
      const k = streamKeys('agentplane', { namespace: 'x{y}', name: 'n}{', uid: 'u{1}' });
      for (const key of Object.values(k)) {
        expect(key.startsWith('agentplane:{x%7By%7D/n%7D%7B}:'), key).to.equal(true);
        expect(key.split('{').length - 1, key).to.equal(1);
        expect(key.split('}').length - 1, key).to.equal(1);
      }
    });

    it('keeps names with ":" and "{" in two namespaces apart in Redis', async () => {
      const store = await openStore(redis.url);
      const a: StreamRef = { namespace: 'team:a', name: 'x', uid: 'u1' };
      const b: StreamRef = { namespace: 'team', name: 'a:x', uid: 'u1' };
      const c: StreamRef = { namespace: 'team{a}', name: 'x', uid: 'u1' };
      for (let i = 1; i <= 3; i++) await store.append(a, text(`a${i}`));
      for (let i = 1; i <= 2; i++) await store.append(b, text(`b${i}`));
      await store.append(c, text('c1'));
      expect((await store.since(a, 0)).map(contentOf)).to.deep.equal(['a1', 'a2', 'a3']);
      expect((await store.since(b, 0)).map((e) => [e.seq, contentOf(e), e.namespace, e.agentName])).to.deep.equal([
        [1, 'b1', 'team', 'a:x'],
        [2, 'b2', 'team', 'a:x'],
      ]);
      expect((await store.since(c, 0)).map((e) => e.seq)).to.deep.equal([1]);
      await store.deleteStream(a);
      expect(await store.lastSeq(b)).to.equal(2);
      expect(await store.lastSeq(c)).to.equal(1);
    });
  });

  describe('live follow across processes', () => {
    const agentOf = (s: StreamRef, task = 1): Agent => ({ metadata: { namespace: s.namespace, name: s.name, uid: s.uid }, spec: { task } }) as unknown as Agent;

    it('a follower on one connection sees every append made on others, in seq order, once', async () => {
      const prefix = freshPrefix();
      const [a, b, c] = await Promise.all([0, 1, 2].map(() => openStore(redis.url, { keyPrefix: prefix })));
      const replicaA = new EventLog(a);
      const replicaB = new EventLog(b);
      const replicaC = new EventLog(c);
      const s: StreamRef = { namespace: 'default', name: 'shared', uid: 'u-shared' };
      for (let i = 1; i <= 20; i++) await replicaA.append(s, { ...text(`before${i}`), task: 1 });

      const got: AgentEvent[] = [];
      const following = followEvents(replicaB, agentOf(s), (ev) => got.push(ev), { since: 0 });
      // Appends race the replay: from two other replicas at once.
      const appends = Promise.all([
        (async () => {
          for (let i = 1; i <= 100; i++) await replicaA.append(s, { ...text(`a${i}`), task: 1 });
        })(),
        (async () => {
          for (let i = 1; i <= 100; i++) await replicaC.append(s, { ...text(`c${i}`), task: 1 });
        })(),
      ]);
      await following.replayed;
      await appends;
      try {
        await eventually(async () => got.length >= 220, 10_000, `220 events (have ${got.length})`);
        expect(got.map((e) => e.seq)).to.deep.equal(Array.from({ length: 220 }, (_, i) => i + 1));
        expect(got.filter((e) => contentOf(e).startsWith('a')).map(contentOf)).to.deep.equal(Array.from({ length: 100 }, (_, i) => `a${i + 1}`));
        expect(got.filter((e) => contentOf(e).startsWith('c')).map(contentOf)).to.deep.equal(Array.from({ length: 100 }, (_, i) => `c${i + 1}`));
        // Still live afterwards, and nothing arrives twice.
        await replicaC.append(s, { ...text('late'), task: 1 });
        await eventually(async () => got.length === 221, 5_000, 'the late event');
        expect(got.at(-1)).to.include({ seq: 221 });
      } finally {
        following.stop();
      }
    });

    it('several followers of several streams on one store each get their own, from where they joined', async () => {
      const prefix = freshPrefix();
      const writer = await openStore(redis.url, { keyPrefix: prefix });
      const reader = new EventLog(await openStore(redis.url, { keyPrefix: prefix }));
      const s1: StreamRef = { namespace: 'ns', name: 'one', uid: 'u1' };
      const s2: StreamRef = { namespace: 'ns', name: 'two', uid: 'u2' };
      await writer.append(s1, text('old'));
      const first: AgentEvent[] = [];
      const stop1 = reader.subscribe(s1, (e) => first.push(e));
      await reader.lastSeq(s1); // answered after the subscription's start read: it is armed
      await writer.append(s1, text('one-1'));
      await eventually(async () => first.length === 1, 5_000, 'first follower');
      const second: AgentEvent[] = [];
      const stop2 = reader.subscribe(s1, (e) => second.push(e));
      const other: AgentEvent[] = [];
      const stop3 = reader.subscribe(s2, (e) => other.push(e));
      await reader.lastSeq(s1);
      await writer.append(s2, text('two-1'));
      await writer.append(s1, text('one-2'));
      await eventually(async () => first.length === 2 && second.length === 1 && other.length === 1, 5_000, 'all followers');
      expect(first.map(contentOf)).to.deep.equal(['one-1', 'one-2']);
      expect(second.map(contentOf)).to.deep.equal(['one-2']);
      expect(other.map(contentOf)).to.deep.equal(['two-1']);
      stop1();
      await writer.append(s1, text('one-3'));
      await eventually(async () => second.length === 2, 5_000, 'second follower after the first stopped');
      expect(first).to.have.length(2);
      stop2();
      stop3();
    });
  });

  describe('auth', () => {
    let secured: RedisServer;
    let dir: string;
    before(async () => {
      secured = await startRedisServer({ password: 's3cret-default', args: ['--user', 'agentplane', 'on', '>s3cret-user', '~*', '&*', '+@all'] });
      dir = mkdtempSync(join(tmpdir(), 'agentplane-redis-auth-'));
    });
    after(async () => {
      await secured?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('works with the password (default user) and with a username and password', async () => {
      const plain = await openStore(secured.url, { connection: { url: secured.url, password: 's3cret-default' } });
      expect((await plain.append({ namespace: 'n', name: 'a', uid: 'u' }, text('x'))).seq).to.equal(1);
      await plain.ping();
      const named = await openStore(secured.url, { connection: { url: secured.url, username: 'agentplane', password: 's3cret-user' } });
      expect((await named.append({ namespace: 'n', name: 'a', uid: 'u' }, text('x'))).seq).to.equal(1);
    });

    it('reports a wrong or missing password through ping (readiness), without leaking it', async () => {
      for (const connection of [{ url: secured.url, password: 'wrong-pass' }, { url: secured.url }]) {
        const store = new RedisEventStore({ connection, keyPrefix: freshPrefix() });
        stores.push(store);
        await pingFails(store, (m) => /WRONGPASS|NOAUTH|not connected/i.test(m) && !m.includes('wrong-pass'), 'ping to fail with an auth error');
      }
    });

    it('the plugin reads the password from a file (a mounted Secret) or AGENTPLANE_REDIS_PASSWORD', async () => {
      const file = join(dir, 'password');
      writeFileSync(file, 's3cret-user\n', { mode: 0o600 });
      const fromFile = resolveRedisSettings({ url: secured.url, username: 'agentplane', passwordFile: file }, {});
      expect(fromFile.connection).to.include({ username: 'agentplane', passwordFile: file });
      expect(fromFile.connection.password).to.equal(undefined);
      const fromEnv = resolveRedisSettings({}, { AGENTPLANE_REDIS_URL: secured.url, AGENTPLANE_REDIS_PASSWORD: 's3cret-default' });
      expect(fromEnv.connection).to.include({ url: secured.url, password: 's3cret-default' });

      const provided: RedisEventStore[] = [];
      const metrics = new Metrics();
      const ctx = testPluginContext({
        config: {
          dataDir: dir,
          options: { 'event-store-redis': { url: secured.url, username: 'agentplane', passwordFile: file, keyPrefix: freshPrefix() } },
          eventsPerAgent: 3,
        },
        metrics,
        provideEventStore: (s) => void provided.push(s as RedisEventStore),
      });
      const teardown = await plugin.setup(ctx);
      try {
        expect(provided).to.have.length(1);
        const store = provided[0];
        await store.ready();
        const s: StreamRef = { namespace: 'n', name: 'plugin', uid: 'u' };
        for (let i = 0; i < 5; i++) await store.append(s, text(`p${i}`));
        expect(
          (await store.since(s, 0)).map((e) => e.seq),
          'eventsPerAgent caps the stream',
        ).to.deep.equal([3, 4, 5]);
        const exposition = await metrics.registry.metrics();
        expect(exposition).to.match(/agentplane_event_store_operation_duration_seconds_count\{store="redis",operation="append",outcome="ok"\} 5/);
      } finally {
        await teardown!();
      }
    });

    it('reads the password file again on reconnect: a rotated Secret takes effect', async () => {
      const file = join(dir, 'rotating');
      writeFileSync(file, 'first-pass\n', { mode: 0o600 });
      const admin = await openStore(secured.url, { connection: { url: secured.url, password: 's3cret-default' } });
      const acl = (args: string[]) => (admin as unknown as { commands: { sendCommand(a: string[]): Promise<unknown> } }).commands.sendCommand(args);
      await acl(['ACL', 'SETUSER', 'rotating', 'on', 'resetpass', '>first-pass', '~*', '&*', '+@all']);
      let reconnects = 0;
      const observer = { operation: () => undefined, reconnect: () => void reconnects++ };
      const store = await openStore(secured.url, { connection: { url: secured.url, username: 'rotating', passwordFile: file }, observer });
      const s: StreamRef = { namespace: 'n', name: 'rotate', uid: 'u' };
      await store.append(s, text('before'));

      // The Secret changes: Redis first, then the mounted file; then the connections drop.
      await acl(['ACL', 'SETUSER', 'rotating', 'resetpass', '>second-pass']);
      writeFileSync(file, 'second-pass\n');
      await acl(['CLIENT', 'KILL', 'USER', 'rotating']);
      await eventually(
        async () => {
          try {
            await store.ping();
            return true;
          } catch {
            return false;
          }
        },
        10_000,
        'the store to reconnect with the new password',
      );
      expect((await store.append(s, text('after'))).seq).to.equal(2);
      expect(reconnects, 'the connections were dropped and made again').to.be.greaterThan(0);
    });

    it('refuses settings it cannot use, saying what to give', () => {
      expect(() => resolveRedisSettings({}, {})).to.throw(/AGENTPLANE_REDIS_URL/);
      expect(() => resolveRedisSettings({ url: 'http://x' }, {})).to.throw(/redis:\/\/ or rediss:\/\//);
      expect(() => resolveRedisSettings({ url: secured.url, password: 'p' }, {})).to.throw(/passwordFile/);
      expect(() => resolveRedisSettings({ url: secured.url, passwordFile: join(dir, 'absent') }, {})).to.throw(/passwordFile .*absent/);
      expect(() => resolveRedisSettings({ url: secured.url, certFile: join(dir, 'c') }, {})).to.throw(/certFile and keyFile/);
      expect(() => new RedisEventStore({ connection: { url: secured.url }, keyPrefix: 'a{b' })).to.throw(/keyPrefix/);
      expect(redactUrl('redis://user:pa55@host:6379/0')).to.equal('redis://user:***@host:6379/0');
    });
  });

  describe('TLS', () => {
    let tlsRedis: RedisServer;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agentplane-redis-tls-'));
      await makeServingCert(dir);
      tlsRedis = await startRedisServer({
        tls: { certFile: join(dir, 'serving.crt'), keyFile: join(dir, 'serving.key'), caFile: join(dir, 'serving-ca.crt') },
      });
    });
    after(async () => {
      await tlsRedis?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('connects over TLS with the CA from caFile, follows too', async () => {
      const settings = resolveRedisSettings({ url: tlsRedis.url, caFile: join(dir, 'serving-ca.crt') }, {});
      const prefix = freshPrefix();
      const writer = await openStore(tlsRedis.url, { connection: settings.connection, keyPrefix: prefix });
      const reader = await openStore(tlsRedis.url, { connection: settings.connection, keyPrefix: prefix });
      const s: StreamRef = { namespace: 'n', name: 'tls', uid: 'u' };
      const live: AgentEvent[] = [];
      const stop = reader.follow(s, (evs) => live.push(...evs));
      await reader.lastSeq(s);
      await writer.append(s, text('over tls'));
      await eventually(async () => live.length === 1, 5_000, 'the event over TLS');
      stop();
      expect(contentOf(live[0])).to.equal('over tls');
      await reader.ping();
    });

    it('refuses a server whose certificate it cannot verify (no CA given)', async () => {
      const store = new RedisEventStore({ connection: { url: tlsRedis.url }, keyPrefix: freshPrefix() });
      stores.push(store);
      await pingFails(store, (m) => /certificate|not connected/i.test(m), 'ping to fail on the certificate');
    });
  });

  describe('Redis restart', () => {
    let durable: RedisServer;
    before(async () => {
      durable = await startRedisServer({ persist: true });
    });
    after(async () => {
      await durable?.close();
    });

    for (const kill of [false, true]) {
      it(`reconnects after ${kill ? 'SIGKILL' : 'SIGTERM'}: ping fails while Redis is down, appends made meanwhile land in order, followers resume`, async () => {
        const prefix = freshPrefix();
        const metrics = new Metrics();
        const observer = storeMetrics(metrics);
        const writer = await openStore(durable.url, { keyPrefix: prefix, observer });
        const reader = await openStore(durable.url, { keyPrefix: prefix });
        const s: StreamRef = { namespace: 'n', name: `restart-${kill}`, uid: 'u' };
        const live: AgentEvent[] = [];
        const stop = reader.follow(s, (evs) => live.push(...evs));
        await reader.lastSeq(s);
        for (let i = 1; i <= 5; i++) await writer.append(s, text(`before${i}`));
        await eventually(async () => live.length === 5, 5_000, 'events before the restart');

        await durable.stop({ kill });
        await eventually(
          async () => {
            try {
              await writer.ping();
              return false;
            } catch {
              return true;
            }
          },
          5_000,
          'ping to fail while Redis is down',
        );
        // Issued while Redis is down: waits for the connection, then lands in order.
        const during = Promise.all([1, 2, 3].map((i) => writer.append(s, text(`during${i}`))));
        await new Promise((r) => setTimeout(r, 300));
        await durable.start();
        expect((await during).map((e) => e.seq)).to.deep.equal([6, 7, 8]);
        await writer.ping();
        for (let i = 1; i <= 2; i++) await writer.append(s, text(`after${i}`));
        await eventually(async () => live.length === 10, 10_000, `10 live events (have ${live.length})`);
        stop();
        expect(live.map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(live.map(contentOf)).to.deep.equal(['before1', 'before2', 'before3', 'before4', 'before5', 'during1', 'during2', 'during3', 'after1', 'after2']);
        expect(await metrics.registry.getSingleMetricAsString('agentplane_event_store_reconnects_total')).to.match(/connection="commands"\} [1-9]/);
      });
    }
  });
});

describe('event-store-redis in a server (integration)', function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let h: Harness;
  const prefix = freshPrefix();
  before(async () => {
    redis = await startRedisServer({ persist: true });
    h = await startHarness({
      plugins: ['event-store-redis', 'sleep-wake'],
      pluginOptions: { 'event-store-redis': { url: redis.url, keyPrefix: prefix } },
    });
  });
  after(async () => {
    await h?.close();
    await redis?.close();
  });

  it('a WebSocket on this replica sees the events another replica appends to the shared store', async () => {
    const created = await h.api('POST', '/api/v1/agents', { name: 'shared', instructions: '@say from the server' });
    expect(created.status, created.text).to.equal(201);
    const ws = new EventClient(`${h.url}/api/v1/agents/shared/ws?since=0`);
    try {
      const ended = await ws.untilTaskEnd();
      expect(ended.at(-1)!.type).to.equal('task_completed');
      // Another replica (its own connection) appends to the same agent's stream.
      const agent = (await h.api('GET', '/apis/agentplane.io/v1alpha1/namespaces/default/agents/shared')).body as Agent;
      const other = await openStore(redis.url, { keyPrefix: prefix });
      const ref: StreamRef = { namespace: 'default', name: 'shared', uid: agent.metadata.uid };
      const appended = await other.append(ref, { ...text('from replica B'), task: 1 });
      const evs = await ws.until((all) => all.some((e) => e.seq === appended.seq));
      expect(evs.map((e) => e.seq)).to.deep.equal(Array.from({ length: appended.seq }, (_, i) => i + 1));
      expect(contentOf(evs.at(-1)!)).to.equal('from replica B');
    } finally {
      ws.close();
    }
  });

  it('/readyz fails while Redis is unreachable and recovers after; store metrics are exported', async () => {
    expect((await h.api('GET', '/readyz')).status).to.equal(200);
    await redis.stop();
    const down = await eventually(
      async () => {
        const r = await h.api('GET', '/readyz');
        return r.status === 503 ? r : undefined;
      },
      10_000,
      '/readyz 503',
    );
    expect(down.text).to.match(/event store/);
    await redis.start();
    await eventually(async () => (await h.api('GET', '/readyz')).status === 200, 10_000, '/readyz 200 again');
    const metrics = (await h.api('GET', '/metrics')).text;
    expect(metrics).to.match(/agentplane_event_store_operation_duration_seconds_count\{store="redis",operation="append",outcome="ok"\} [1-9]/);
    expect(metrics).to.match(/agentplane_event_store_reconnects_total\{store="redis",connection="commands"\} [1-9]/);
  });

  it('starts while Redis is unreachable, not ready until Redis is there', async () => {
    const late = await startRedisServer();
    await late.stop();
    const h2 = await startHarness({
      plugins: ['event-store-redis', 'sleep-wake'],
      pluginOptions: { 'event-store-redis': { url: late.url, keyPrefix: freshPrefix() } },
    });
    try {
      const r = await h2.api('GET', '/readyz');
      expect(r.status, r.text).to.equal(503);
      expect(r.body).to.deep.include({ reason: 'ServiceUnavailable' });
      expect(r.text).to.match(/event store: Redis is not connected/);
      await late.start();
      await eventually(async () => (await h2.api('GET', '/readyz')).status === 200, 10_000, '/readyz 200 once Redis is up');
      const created = await h2.api('POST', '/api/v1/agents', { name: 'late', instructions: '@say after all' });
      expect(created.status, created.text).to.equal(201);
      const ws = new EventClient(`${h2.url}/api/v1/agents/late/ws?since=0`);
      try {
        expect((await ws.untilTaskEnd()).at(-1)!.type).to.equal('task_completed');
      } finally {
        ws.close();
      }
    } finally {
      await h2.close();
      await late.close();
    }
  });
});
