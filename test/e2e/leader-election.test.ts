// Several replicas of the cluster home on a real control plane: two agentplane processes with
// --leader-elect share one coordination.k8s.io Lease. Only the holder runs the reconcilers;
// both serve the aggregated API (kubectl through the APIService, and each replica directly with
// the admin's client certificate), and a consistent read on either sees every write acknowledged
// through the other. The leader is killed with SIGKILL over several trials: the other takes over
// within the lease duration of the last renewal (printed), reconciles what was created meanwhile,
// and settles the task the dead leader's worker was running. Agents run as local worker
// processes (the API-only plane has no node), so a killed leader's workers die with it. Events
// live in a shared Redis (a real redis-server on loopback, the event-store-redis plugin): a
// WebSocket on either replica sees every event, in order, across a change of leader and a
// restart of Redis; a client of the dead replica resumes on the other with `since`.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { expect } from 'chai';
import WebSocket from 'ws';

import type { AgentEvent } from '../../pkg/api/event.js';

import { type ControlPlane, controlPlaneUp, REPO } from '../support/control-plane.js';
import { busyFor, eventually } from '../support/harness.js';
import { processesWith } from '../support/processes.js';
import { type RedisServer, startRedisServer } from '../support/redis-server.js';
import { makeServingCert } from '../support/tls.js';

const MAIN = join(REPO, 'dist/cmd/agentplane/main.js');
const NS = 'agentplane-system';
const GV = '/apis/agentplane.io/v1alpha1';
// Short timings, so a trial takes seconds; the rules are the same as with the defaults (15/10/2 s).
const LEASE_S = 3;
const RENEW_S = 2;
const RETRY_S = 0.5;
const TRIALS = Number(process.env.LEADER_TRIALS ?? 10);
/** Scheduling and one request on a loaded 2-core machine: the takeover bound is lease + this. */
const TAKEOVER_MARGIN_MS = 500;
const PLUGINS = 'event-store-redis,sleep-wake,credential-mirror';

interface Tally {
  delivered: number;
  lost: number;
  duplicated: number;
  unknown: number;
  outOfOrder: number;
  gaps: number;
}

interface Replica {
  name: string;
  child: ChildProcess;
  identity: string;
  port: number;
  lines: any[];
  exited: Promise<void>;
}

describe('e2e: leader election between two replicas', function () {
  this.timeout(180_000);

  let cp: ControlPlane;
  let work: string;
  let ca: Buffer;
  let admin: { cert: Buffer; key: Buffer };
  let redis: RedisServer;
  const replicas: Replica[] = [];
  let started = 0;

  /** Starts a replica; resolves once it serves. */
  async function startReplica(): Promise<Replica> {
    const name = `r${++started}`;
    const child = spawn(
      process.execPath,
      [
        MAIN,
        'serve',
        '--mode',
        'kubernetes',
        '--kubeconfig',
        cp.kubeconfig,
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--tls-cert-file',
        join(work, 'serving.crt'),
        '--tls-private-key-file',
        join(work, 'serving.key'),
        '--data-dir',
        join(work, name),
        '--demo',
        '--runtime',
        'local',
        '--install-namespace',
        NS,
        '--leader-elect',
        '--leader-elect-lease-duration',
        String(LEASE_S),
        '--leader-elect-renew-deadline',
        String(RENEW_S),
        '--leader-elect-retry-period',
        String(RETRY_S),
        '--plugins',
        PLUGINS,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AGENTPLANE_LOG_LEVEL: 'info', AGENTPLANE_REDIS_URL: redis.url } },
    );
    const lines: any[] = [];
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (l) => {
        try {
          const o = JSON.parse(l);
          lines.push(o);
          if (o.msg === 'agentplane is serving') resolve(Number(new URL(o.url).port));
        } catch {
          // not a log line
        }
      });
      void exited.then(() => reject(new Error(`replica ${name} exited before serving: ${stderr.slice(-2000)}`)));
    });
    const r = { name, child, identity: `${hostname()}_${child.pid}`, port, lines, exited };
    replicas.push(r);
    return r;
  }

  function request(
    r: Replica,
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<{ status: number; json: any; text: string }> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port: r.port, method, path, ca, ...admin, agent: false, headers: data ? { 'content-type': contentType } : {} },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            let json: any;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json, text });
          });
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  }

  async function holder(): Promise<string> {
    const res = await cp.kubectl(['get', 'lease', 'agentplane', '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}'], { allowFail: true });
    return res.code === 0 ? res.stdout.trim() : '';
  }

  const live = (): Replica[] => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  const leaderOf = async (): Promise<Replica | undefined> => {
    const h = await holder();
    return live().find((r) => r.identity === h);
  };

  const agentBody = (name: string, instructions: string) => ({
    apiVersion: 'agentplane.io/v1alpha1',
    kind: 'Agent',
    metadata: { name, namespace: 'default' },
    spec: { instructions, role: 'worker' },
  });
  const getAgent = async (r: Replica, name: string): Promise<any> => (await request(r, 'GET', `${GV}/namespaces/default/agents/${name}`)).json;
  const createAgent = async (r: Replica, name: string, instructions: string): Promise<void> => {
    const res = await request(r, 'POST', `${GV}/namespaces/default/agents`, agentBody(name, instructions));
    expect(res.status, res.text).to.equal(201);
  };
  const metricOf = async (r: Replica, metric: string): Promise<number> => {
    const res = await request(r, 'GET', '/metrics');
    const m = new RegExp(`^${metric.replace(/[{}.*+?^$|()[\]\\]/g, '\\$&')} (\\S+)$`, 'm').exec(res.text);
    return m ? Number(m[1]) : NaN;
  };
  const TERMINAL = ['task_completed', 'task_cancelled', 'error'];
  /** A client of one replica's REST mirror following an agent's events over WebSocket, from `since`. */
  class Follower {
    readonly events: AgentEvent[] = [];
    closed = false;
    private readonly ws: WebSocket;
    constructor(r: Replica, agent: string, since = 0) {
      this.ws = new WebSocket(`wss://127.0.0.1:${r.port}/api/v1/agents/${agent}/ws?namespace=default&since=${since}`, { ca, ...admin });
      this.ws.on('message', (d) => this.events.push(JSON.parse((d as Buffer).toString()) as AgentEvent));
      this.ws.on('close', () => (this.closed = true));
      this.ws.on('error', () => (this.closed = true));
    }
    lastSeq(): number {
      return this.events.at(-1)?.seq ?? 0;
    }
    ended(): boolean {
      return this.events.some((e) => TERMINAL.includes(e.type));
    }
    close(): void {
      this.ws.close();
    }
  }
  /**
   * What a client received against the agent's stored history: stored events it never got
   * (lost), events it got more than once (duplicated), events it got that are not stored
   * (unknown), and places where its seq went backwards or skipped one (out of order, gaps).
   */
  async function tally(r: Replica, agent: string, got: AgentEvent[]): Promise<Tally> {
    const hist = await request(r, 'GET', `/api/v1/agents/${agent}/events?namespace=default&limit=200`);
    expect(hist.status, hist.text).to.equal(200);
    const stored: AgentEvent[] = hist.json.events;
    const times = new Map<number, number>();
    for (const e of got) times.set(e.seq, (times.get(e.seq) ?? 0) + 1);
    const storedSeqs = new Set(stored.map((e) => e.seq));
    const typeOf = new Map(stored.map((e) => [e.seq, e.type]));
    return {
      delivered: got.length,
      lost: stored.filter((e) => !times.has(e.seq)).length,
      duplicated: [...times.values()].reduce((n, k) => n + k - 1, 0),
      unknown: got.filter((e) => !storedSeqs.has(e.seq) || typeOf.get(e.seq) !== e.type).length,
      outOfOrder: got.filter((e, i) => i > 0 && e.seq <= got[i - 1].seq).length,
      gaps: got.filter((e, i) => i > 0 && e.seq > got[i - 1].seq + 1).length,
    };
  }
  const NONE = { lost: 0, duplicated: 0, unknown: 0, outOfOrder: 0, gaps: 0 };
  const faults = (t: Tally): Omit<Tally, 'delivered'> => ({
    lost: t.lost,
    duplicated: t.duplicated,
    unknown: t.unknown,
    outOfOrder: t.outOfOrder,
    gaps: t.gaps,
  });
  /** What a client received is the agent's history exactly: every stored event once, in seq order. Returns the count. */
  async function expectWhole(r: Replica, agent: string, got: AgentEvent[]): Promise<number> {
    const t = await tally(r, agent, got);
    expect(faults(t), `${agent}: received vs stored`).to.deep.equal(NONE);
    return t.delivered;
  }

  /** Log lines of the replica's agent controller about the named agent. */
  const dispatched = (r: Replica, name: string): boolean => r.lines.some((l) => l.msg === 'task dispatched' && l.name === name);

  before(async function () {
    this.timeout(30 * 60_000); // a first run builds kube-apiserver
    cp = await controlPlaneUp();
    // Persistent (append-only, fsync always): a restart of Redis keeps the events, as in production.
    redis = await startRedisServer({ persist: true });
    work = mkdtempSync(join(tmpdir(), 'agentplane-leader-'));
    ca = await makeServingCert(work);
    admin = { cert: readFileSync(join(cp.dir, 'pki/admin.crt')), key: readFileSync(join(cp.dir, 'pki/admin.key')) };
    await cp.kubectl(['create', 'namespace', NS]);
    const first = await startReplica();
    // The first takes the free Lease at once; the second then finds it held.
    await eventually(async () => (await holder()) === first.identity, 10_000, 'the first replica holds the Lease');
    await startReplica();
  });

  after(async () => {
    for (const r of live()) r.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    // Workers of killed replicas follow their spawner out; make sure, by pid.
    if (work) {
      await eventually(async () => processesWith(work).length === 0, 10_000, 'no process of the replicas left').catch(() => {
        for (const pid of processesWith(work)) process.kill(pid, 'SIGKILL');
      });
    }
    await cp?.down();
    await redis?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('one replica holds the Lease and runs the reconcilers; both serve kubectl get and list', async () => {
    const [a, b] = replicas as [Replica, Replica];
    expect(await holder()).to.equal(a.identity);
    expect(await metricOf(a, 'agentplane_leader')).to.equal(1);
    expect(await metricOf(b, 'agentplane_leader')).to.equal(0);

    // kubectl reaches the follower (the APIService points at it); the leader reconciles.
    await cp.kubectl(['apply', '-f', '-'], {
      input:
        `apiVersion: v1\nkind: Service\nmetadata: {name: agentplane, namespace: ${NS}}\nspec: {type: ExternalName, externalName: localhost}\n---\n` +
        `apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1alpha1.agentplane.io}\nspec:\n  group: agentplane.io\n  version: v1alpha1\n` +
        `  groupPriorityMinimum: 1000\n  versionPriority: 15\n  service: {namespace: ${NS}, name: agentplane, port: ${b.port}}\n  caBundle: ${ca.toString('base64')}\n`,
    });
    await cp.kubectl(['wait', '--for=condition=Available', '--timeout=60s', 'apiservice/v1alpha1.agentplane.io']);
    // Available means discovery answers; apply needs the group in discovery and the OpenAPI kube-apiserver downloads a little later.
    await eventually(
      async () => (await cp.kubectl(['api-resources', '--api-group=agentplane.io'], { allowFail: true })).stdout.includes('agents'),
      30_000,
      'agents in discovery',
    );
    await eventually(
      async () => (await cp.kubectl(['get', '--raw', '/openapi/v3/apis/agentplane.io/v1alpha1'], { allowFail: true })).code === 0,
      30_000,
      'the OpenAPI aggregated',
    );
    await cp.kubectl(['apply', '-f', '-'], { input: JSON.stringify(agentBody('first', '@say hello from the leader')) });
    await eventually(
      async () => (await cp.kubectl(['get', 'agent', 'first', '-o', 'jsonpath={.status.taskStatus}'])).stdout === 'Complete',
      60_000,
      'task complete',
    );

    expect(dispatched(a, 'first'), 'the leader dispatched the task').to.equal(true);
    expect(dispatched(b, 'first'), 'the follower runs no reconciler').to.equal(false);
    expect((await cp.kubectl(['get', 'agents'])).stdout).to.match(/^first\s+Running\s+Complete/m);
    // The leader serves the API as well (its own caches), directly.
    const list = await request(a, 'GET', `${GV}/namespaces/default/agents`);
    expect(list.status).to.equal(200);
    expect(list.json.items.map((i: any) => [i.metadata.name, i.status.taskStatus])).to.deep.include(['first', 'Complete']);
    // Both are ready.
    for (const r of [a, b]) expect((await request(r, 'GET', '/readyz')).status).to.equal(200);
  });

  it('a consistent read on either replica sees every write acknowledged before it: each of 50 creates and patches read back at once through the other replica', async () => {
    const [a, b] = live() as [Replica, Replica];
    const AGENTS = 10;
    const ROUNDS = 50;
    const path = `${GV}/namespaces/default/agents`;
    // A labelled counter has no series before its first count: absent is 0.
    const reads = async (r: Replica, source: string): Promise<number> =>
      (await metricOf(r, `agentplane_api_reads_total{kind="Agent",source="${source}"}`)) || 0;
    const before = { a: await reads(a, 'storage'), b: await reads(b, 'storage') };
    let seen = 0;
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate the writer, so both the leader and the follower read the other's writes.
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      const name = `consistent-${i % AGENTS}`;
      const labels = { round: String(i) };
      // Asleep with no task: no worker to start, only the write and the reads.
      const res =
        i < AGENTS
          ? await request(writer, 'POST', path, {
              ...agentBody(name, 'read back'),
              metadata: { name, namespace: 'default', labels },
              spec: { instructions: 'read back', lifecycle: 'Sleep', task: 0 },
            })
          : await request(writer, 'PATCH', `${path}/${name}`, { metadata: { labels } }, 'application/merge-patch+json');
      expect(res.status, res.text).to.be.oneOf([200, 201]);
      const written = Number(res.json.metadata.resourceVersion);
      const [got, list] = [await request(reader, 'GET', `${path}/${name}`), await request(reader, 'GET', `${path}?labelSelector=round%3D${i}`)];
      expect(got.status, got.text).to.equal(200);
      expect(got.json.metadata.labels, `round ${i}: GET on ${reader.name} after the write on ${writer.name}`).to.deep.equal(labels);
      expect(Number(got.json.metadata.resourceVersion)).to.be.at.least(written);
      expect(
        list.json.items.map((o: any) => o.metadata.name),
        `round ${i}: list on ${reader.name}`,
      ).to.deep.equal([name]);
      expect(Number(list.json.metadata.resourceVersion)).to.be.at.least(written);
      seen++;
    }
    // The cache may well have had each write by then (the watch is quick): what makes it certain
    // is that every consistent read went to storage, 2 per round on the reading replica.
    const storageReads = { a: (await reads(a, 'storage')) - before.a, b: (await reads(b, 'storage')) - before.b };
    expect(storageReads.a, 'consistent reads on the leader read storage').to.be.at.least(ROUNDS);
    expect(storageReads.b, 'consistent reads on the follower read storage').to.be.at.least(ROUNDS);
    // resourceVersion=0 stays in the cache.
    const cached = await reads(b, 'cache');
    expect((await request(b, 'GET', `${path}/consistent-0?resourceVersion=0`)).status).to.equal(200);
    expect((await request(b, 'GET', `${path}?resourceVersion=0`)).status).to.equal(200);
    expect(await reads(b, 'cache')).to.equal(cached + 2);
    process.stdout.write(
      `      consistent reads across replicas: ${seen}/${ROUNDS} writes (${AGENTS} creates, ${ROUNDS - AGENTS} patches) seen by the next GET and list on the other replica\n`,
    );
    expect(seen).to.equal(ROUNDS);
  });

  it('steering through the follower: the follow-up is stored on the agent, the leader hands it to the worker, the task answers it', async () => {
    const leader = (await leaderOf())!;
    const follower = live().find((r) => r !== leader)!;
    await createAgent(follower, 'steered', `@bash ${busyFor(4)}\n@say first plan`);
    const watch = new Follower(follower, 'steered');
    await eventually(async () => watch.events.some((e) => e.type === 'tool_call'), 30_000, 'the task running');
    const followUp = 'Also mention the pineapples\n@echo';
    const res = await request(follower, 'PATCH', '/api/v1/agents/steered?namespace=default', { instructions: followUp });
    expect(res.status, res.text).to.equal(200);
    expect(res.json).to.include({ name: 'steered', taskStatus: 'InProgress' });
    // Taken: no longer stored on the agent.
    expect((await getAgent(follower, 'steered')).metadata.annotations ?? {}).to.not.have.property('agentplane.io/follow-ups');
    await eventually(async () => watch.ended(), 60_000, 'the task ends');
    const msgs = watch.events.filter((e) => e.type === 'user_message');
    expect(msgs.map((e) => [e.task, (e.payload as { content: string }).content])).to.deep.equal([[1, followUp]]);
    const done = watch.events.find((e) => e.type === 'task_completed');
    expect((done?.payload as { result: string } | undefined)?.result).to.contain('Also mention the pineapples');
    expect(leader.lines.some((l) => l.msg === 'follow-up handed over' && l.name === 'steered')).to.equal(true);
    watch.close();
  });

  it('a schedule created through the follower fires once per due time: the leader alone gives each run, the follower none', async () => {
    const [a, b] = live() as [Replica, Replica];
    const leader = (await leaderOf())!;
    const follower = leader === a ? b : a;
    await createAgent(follower, 'ticked', '@say ready');
    await eventually(async () => (await getAgent(follower, 'ticked'))?.status?.taskStatus === 'Complete', 60_000, 'first task');
    const made = await request(follower, 'POST', `${GV}/namespaces/default/schedules`, {
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Schedule',
      metadata: { name: 'every-fifteen', namespace: 'default' },
      spec: { agent: 'ticked', cron: '*/15 * * * * *', instructions: '@say tick', concurrencyPolicy: 'Forbid' },
    });
    expect(made.status, made.text).to.equal(201);
    const created = Date.parse(made.json.metadata.creationTimestamp);
    // Three due times pass, then it is suspended and its runs are counted.
    await new Promise((resolve) => setTimeout(resolve, 46_000));
    const suspended = await request(
      follower,
      'PATCH',
      `${GV}/namespaces/default/schedules/every-fifteen`,
      { spec: { suspend: true } },
      'application/merge-patch+json',
    );
    expect(suspended.status, suspended.text).to.equal(200);
    await eventually(async () => (await getAgent(follower, 'ticked'))?.status?.taskStatus === 'Complete', 60_000, 'the last run done');
    const s = (await request(follower, 'GET', `${GV}/namespaces/default/schedules/every-fifteen`)).json;
    const handled = Date.parse(s.status.lastScheduleTime);
    const dueTimes = Math.floor(handled / 15_000) - Math.floor(created / 15_000);
    expect(dueTimes).to.be.at.least(3);
    const hist = await request(follower, 'GET', '/api/v1/agents/ticked/events?namespace=default&limit=200');
    const runs = (hist.json.events as AgentEvent[]).filter(
      (e) => e.type === 'task_started' && (e.payload as { instructions: string }).instructions === '@say tick',
    );
    // Each due time gave one task, none twice: one run per 15 s slot, as many as the due times handled.
    const slots = runs.map((e) => Math.floor(Date.parse(e.timestamp) / 15_000));
    expect(new Set(slots).size, JSON.stringify(runs.map((e) => e.timestamp))).to.equal(runs.length);
    expect(runs.length).to.equal(dueTimes);
    const started = (r: Replica): number => r.lines.filter((l) => l.msg === 'schedule run started' && l.name === 'every-fifteen').length;
    expect(started(leader)).to.equal(runs.length);
    expect(started(follower)).to.equal(0);
    expect((await request(follower, 'DELETE', `${GV}/namespaces/default/schedules/every-fifteen`)).status).to.equal(200);
  });

  it(`kill -9 the leader (${TRIALS} trials) mid-task: the other takes over within the lease duration, reconciles from its caches, and no client misses or repeats an event`, async function () {
    this.timeout(TRIALS * 90_000);
    const fromKill: number[] = [];
    const fromRenewal: number[] = [];
    let reconciled = 0;
    let settled = 0;
    let ackedBeforeKill = 0;
    const total: Tally = { delivered: 0, ...NONE };
    for (let i = 1; i <= TRIALS; i++) {
      const leader = await leaderOf();
      expect(leader, 'a live replica holds the Lease').to.not.equal(undefined);
      const survivor = live().find((r) => r !== leader)!;
      const transitionsBefore = await metricOf(survivor, 'agentplane_leader_transitions_total');
      // A task running on the leader's worker when it dies, followed from both replicas: the
      // follower's client reads what the leader's worker sent through the shared store.
      const busyName = `busy-${i}`;
      await createAgent(survivor, busyName, `@bash echo started\n@bash ${busyFor(60)}`);
      const onLeader = new Follower(leader!, busyName);
      const onSurvivor = new Follower(survivor, busyName);
      await eventually(async () => onLeader.events.length >= 3 && onSurvivor.events.length >= 3, 30_000, 'both clients follow the running task');

      const t0 = Date.now();
      leader!.child.kill('SIGKILL');
      await leader!.exited;
      // Nobody renews the Lease now: its renewTime is the dead leader's last renewal (a takeover
      // comes no sooner than a lease duration after it, far later than this read).
      const last = JSON.parse((await cp.kubectl(['get', 'lease', 'agentplane', '-n', NS, '-o', 'json'])).stdout);
      expect(last.spec.holderIdentity, 'the dead leader still holds the Lease').to.equal(leader!.identity);
      // Created while no replica leads: the next leader finds it in its caches.
      await createAgent(survivor, `meanwhile-${i}`, '@say created while no one led');
      await eventually(async () => (await holder()) === survivor.identity, (LEASE_S + 5) * 1000, 'the survivor takes the Lease');
      // When it took it, by its own record (same host clock): not by how soon this test looked.
      const acquired = Date.parse((await cp.kubectl(['get', 'lease', 'agentplane', '-n', NS, '-o', 'jsonpath={.spec.acquireTime}'])).stdout.trim());
      fromKill.push(acquired - t0);
      fromRenewal.push(acquired - Date.parse(last.spec.renewTime));
      // Leading starts once its runtime and reconcilers have started.
      await eventually(async () => (await metricOf(survivor, 'agentplane_leader')) === 1, 10_000, 'the survivor reports leading');
      expect(await metricOf(survivor, 'agentplane_leader_transitions_total'), 'the survivor saw the holder change once, to itself').to.equal(
        transitionsBefore + 1,
      );

      await eventually(
        async () => (await getAgent(survivor, `meanwhile-${i}`))?.status?.taskStatus === 'Complete',
        60_000,
        'the object created meanwhile reconciled',
      );
      reconciled++;
      // The dead leader's worker died with it: its task ends as interrupted, not hanging.
      const busy = await eventually(
        async () => {
          const a = await getAgent(survivor, `busy-${i}`);
          return a?.status?.taskStatus !== 'InProgress' ? a : undefined;
        },
        30_000,
        'the interrupted task settled',
      );
      expect(busy.status.taskStatus).to.equal('Error');
      expect(busy.status.lastTaskMessage).to.contain('interrupted');
      // Local workers die with their server: none came back to the survivor.
      expect(await metricOf(survivor, 'agentplane_worker_reconnects_total'), 'no worker outlived the dead leader').to.equal(0);
      settled++;
      // The survivor's client saw the whole task on one socket; the dead replica's client
      // resumes on the survivor from the last event it got. Neither misses or repeats one.
      await eventually(async () => onSurvivor.ended(), 10_000, "the survivor's client sees the task end");
      expect(onLeader.closed, "the dead replica's socket closed").to.equal(true);
      const acknowledged = onLeader.events.length;
      const resumed = new Follower(survivor, busyName, onLeader.lastSeq());
      await eventually(async () => resumed.ended(), 10_000, 'the resumed client sees the task end');
      const end = resumed.events.find((e) => TERMINAL.includes(e.type))!;
      expect(end.type).to.equal('error');
      expect((end.payload as { reason: string }).reason).to.equal('Interrupted');
      for (const got of [onSurvivor.events, [...onLeader.events, ...resumed.events]]) {
        const t = await tally(survivor, busyName, got);
        for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
      }
      ackedBeforeKill += acknowledged;
      for (const f of [onLeader, onSurvivor, resumed]) f.close();

      // The killed replica comes back (as Kubernetes would restart it), as a follower that has
      // seen one holder.
      const back = await startReplica();
      await new Promise((r) => setTimeout(r, RETRY_S * 3000));
      expect(await holder()).to.equal(survivor.identity);
      expect(await metricOf(back, 'agentplane_leader')).to.equal(0);
      expect(await metricOf(back, 'agentplane_leader_transitions_total')).to.equal(1);
    }
    const figures = (xs: number[]): string => {
      const sorted = [...xs].sort((x, y) => x - y);
      return `${xs.join(', ')} (median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)})`;
    };
    // The follower watches the Lease and tries again the moment the lease it saw expires: a
    // takeover comes a lease duration after the dead leader's last renewal, plus scheduling and
    // a request (the margin). The kill is after that renewal, so the same bound holds from it.
    const bound = LEASE_S * 1000 + TAKEOVER_MARGIN_MS;
    process.stdout.write(
      `      leader election: ${TRIALS} kill -9 trials (lease ${LEASE_S} s, renew deadline ${RENEW_S} s, retry ${RETRY_S} s): ` +
        `takeover ms from the kill ${figures(fromKill)}; from the last renewal ${figures(fromRenewal)}; ` +
        `within lease + ${TAKEOVER_MARGIN_MS} ms (${bound} ms) of the kill: ${fromKill.filter((t) => t <= bound).length}/${TRIALS}; ` +
        `objects created meanwhile reconciled: ${reconciled}/${TRIALS}; running tasks settled as interrupted: ${settled}/${TRIALS}; ` +
        `events delivered over WebSockets ${total.delivered} (${ackedBeforeKill} acknowledged by the dead replica's clients before the kill), ` +
        `lost ${total.lost}, duplicated ${total.duplicated}, not stored ${total.unknown}, out of order ${total.outOfOrder}, seq gaps ${total.gaps}\n`,
    );
    expect(faults(total), 'events against the stored history, over all trials').to.deep.equal(NONE);
    for (const t of fromRenewal) expect(t, 'never before the lease expired').to.be.at.least(LEASE_S * 1000);
    for (const t of [...fromKill, ...fromRenewal]) expect(t).to.be.at.most(bound);
  });

  it('a leader that finds the Lease taken stops leading and exits 1; the other takes over once it expires', async () => {
    const leader = (await leaderOf())!;
    const other = live().find((r) => r !== leader)!;
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    await cp.kubectl([
      'patch',
      'lease',
      'agentplane',
      '-n',
      NS,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { holderIdentity: 'intruder', renewTime: now } }),
    ]);
    const exited = await Promise.race([leader.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), RENEW_S * 3000))]);
    expect(exited, 'the deposed leader exits').to.equal(true);
    expect(leader.child.exitCode).to.equal(1);
    expect(leader.lines.some((l) => l.msg === 'stopped leading' && String(l.why).includes('intruder'))).to.equal(true);
    // Nobody renews the intruder's Lease: it expires, and the other replica takes it.
    await eventually(async () => (await holder()) === other.identity, (LEASE_S + 4) * 1000, 'the other takes the expired Lease');
    await eventually(async () => (await metricOf(other, 'agentplane_leader')) === 1, 10_000, 'the other reports leading');
    await startReplica();
  });

  it('Redis restarted mid-stream: both replicas report not ready, then recover; no acknowledged event is lost', async function () {
    this.timeout(120_000);
    const leader = (await leaderOf())!;
    const follower = live().find((r) => r !== leader)!;
    await createAgent(follower, 'through-restart', Array.from({ length: 8 }, (_, n) => `@bash sleep 0.5; echo step-${n}`).join('\n') + '\n@say done');
    const a = new Follower(leader, 'through-restart');
    const b = new Follower(follower, 'through-restart');
    await eventually(async () => b.events.length >= 4, 30_000, 'events flowing');
    const before = b.events.length;
    await redis.stop({ kill: true });
    for (const r of [leader, follower]) {
      await eventually(async () => (await request(r, 'GET', '/readyz')).status === 503, 10_000, `${r.name} not ready while Redis is down`);
    }
    await new Promise((r) => setTimeout(r, 1500)); // the worker keeps working meanwhile
    await redis.start();
    for (const r of [leader, follower]) {
      await eventually(async () => (await request(r, 'GET', '/readyz')).status === 200, 20_000, `${r.name} ready again`);
    }
    await eventually(async () => a.ended() && b.ended(), 60_000, 'both clients see the task end');
    expect(b.events.find((e) => TERMINAL.includes(e.type))!.type).to.equal('task_completed');
    const n = await expectWhole(follower, 'through-restart', b.events);
    await expectWhole(leader, 'through-restart', a.events);
    process.stdout.write(`      Redis restart mid-stream: ${before} events before, ${n} in all, each client got each once, in order\n`);
    a.close();
    b.close();
  });

  it('a graceful stop releases the Lease: the other takes over at once', async () => {
    const leader = (await leaderOf())!;
    const other = live().find((r) => r !== leader)!;
    const t0 = Date.now();
    leader.child.kill('SIGTERM');
    await eventually(async () => (await holder()) === other.identity, LEASE_S * 1000, 'the other takes the released Lease');
    const ms = Date.now() - t0;
    process.stdout.write(`      leader election: takeover after a graceful stop ${ms} ms (lease ${LEASE_S} s)\n`);
    expect(ms).to.be.below(LEASE_S * 1000);
    const exited = await Promise.race([leader.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
    expect(
      exited,
      `the stopped replica exits; its last lines: ${leader.lines
        .slice(-8)
        .map((l) => JSON.stringify(l))
        .join('\n')}`,
    ).to.equal(true);
  });
});
