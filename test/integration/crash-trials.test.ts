// kill -9 of the server mid-task, then a restart on the same data dir, ten times over
// (docs/reliability.md "Server killed mid-task"). Each trial runs a real `agentplane serve`
// process with real workers, creates agents, a squad and a connector, starts tasks, follows them
// over WebSockets, SIGKILLs the server at a seeded random moment and starts it again. Checked:
// the objects survive; every event a client received is in history with the same seq and
// payload; each task ends once, `task_completed` or `error` with reason `Interrupted`; clients
// resuming with `since` miss nothing and see nothing twice; no process of the killed server
// outlives the restart. The figures are printed at the end (CRASH_SEED=<n> replays a run).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import WebSocket from 'ws';
import type { AgentEvent } from '../../pkg/api/event.js';
import { startScriptedModel, type ScriptedModel } from '../../pkg/scriptedmodel/index.js';
import { eventually, TEST_API_KEY } from '../support/harness.js';
import { freePort, processTree, type ProcessId, type ServerProcess, startServerProcess, stillAlive } from '../support/server-process.js';
import { seeded } from '../support/random.js';

const TRIALS = 10;
const SOLO = ['ada', 'bob', 'cyd'];
const MEMBERS = ['kit', 'lou'];
const AGENTS = [...SOLO, ...MEMBERS];
const TERMINAL = ['task_completed', 'task_cancelled', 'error'];

/** A task of `steps` tool calls, each a short-lived process, so a kill lands mid-task. */
const script = (tag: string, steps: number): string =>
  [...Array(steps).keys()].map((i) => `@bash echo ${tag}-step-${i}; node -e "setTimeout(() => {}, 250)"`).join('\n') + `\n@say ${tag} done`;

/** A WebSocket follower that records what it received and tolerates the server dying. */
class Follower {
  readonly events: AgentEvent[] = [];
  closed = false;
  private readonly ws: WebSocket;

  constructor(url: string) {
    this.ws = new WebSocket(url.replace(/^http/, 'ws'));
    this.ws.on('message', (d) => this.events.push(JSON.parse((d as Buffer).toString()) as AgentEvent));
    this.ws.on('error', () => undefined); // a refused upgrade or a reset: `closed` says it
    this.ws.on('close', () => (this.closed = true));
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  close(): void {
    this.ws.terminate();
  }
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Every event of an agent's stream, oldest first, paging back through history. */
async function history(url: string, name: string): Promise<AgentEvent[]> {
  const all: AgentEvent[] = [];
  let before = '';
  for (;;) {
    const r = await api(url, 'GET', `/api/v1/agents/${name}/events?limit=200${before}`);
    expect(r.status).to.equal(200);
    const evs = r.body.events as AgentEvent[];
    all.unshift(...evs);
    if (evs.length < 200) return all;
    before = `&before=${evs[0].seq}`;
  }
}

const names = (items: { name: string }[]): string[] => items.map((i) => i.name).sort();

interface Figures {
  acknowledged: number;
  lost: number;
  interrupted: number;
  completed: number;
  replayed: number;
  duplicates: number;
  orphans: number;
  killedProcesses: number;
  restartMs: number[];
  startMs: number[];
  killAfterMs: number[];
}

describe('server killed mid-task and restarted (integration)', function () {
  this.timeout(20 * 60_000);
  const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
  const rand = seeded(seed);
  let model: ScriptedModel;
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  const figures: Figures = {
    acknowledged: 0,
    lost: 0,
    interrupted: 0,
    completed: 0,
    replayed: 0,
    duplicates: 0,
    orphans: 0,
    killedProcesses: 0,
    restartMs: [],
    startMs: [],
    killAfterMs: [],
  };

  before(async () => {
    console.log(`      crash trials: seed ${seed} (CRASH_SEED=${seed} replays it)`);
    model = await startScriptedModel({ apiKey: TEST_API_KEY });
  });
  after(async () => {
    for (const s of running) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    }
    await model?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    const sorted = (xs: number[]): number[] => xs.slice().sort((a, b) => a - b);
    const ms = sorted(figures.restartMs);
    const fresh = sorted(figures.startMs);
    console.log(
      [
        `      crash trials (seed ${seed}): ${figures.restartMs.length} trials`,
        `        events acknowledged to clients: ${figures.acknowledged}; lost: ${figures.lost}`,
        `        tasks interrupted (error Interrupted): ${figures.interrupted}; completed: ${figures.completed}`,
        `        events resumed with since after restart: ${figures.replayed}; duplicates: ${figures.duplicates}`,
        `        processes of the killed server: ${figures.killedProcesses}; left running after restart: ${figures.orphans}`,
        `        kill after tasks started: ${figures.killAfterMs.map((m) => `${m} ms`).join(', ')}`,
        `        restart to ready: median ${ms[Math.floor(ms.length / 2)] ?? '-'} ms, max ${ms.at(-1) ?? '-'} ms` +
          ` (baseline, first start on an empty data dir: median ${fresh[Math.floor(fresh.length / 2)] ?? '-'} ms, max ${fresh.at(-1) ?? '-'} ms)`,
      ].join('\n'),
    );
  });

  for (let trial = 1; trial <= TRIALS; trial++) {
    it(`trial ${trial}: objects, acknowledged events and task ends survive a SIGKILL mid-task`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'agentplane-crash-'));
      dirs.push(dataDir);
      const port = await freePort();
      const start = async (): Promise<ServerProcess> => {
        const s = await startServerProcess({ port, dataDir, model: { url: model.url, apiKey: TEST_API_KEY } });
        running.push(s);
        return s;
      };
      const first = await start();
      figures.startMs.push(first.readyMs);
      const url = first.url;
      const followers = new Map<string, Follower>();
      let second: ServerProcess | undefined;
      try {
        // Objects: a connector, solo agents with tasks, a squad of two new agents with tasks.
        expect((await api(url, 'POST', '/api/v1/connectors', { name: 'tools', url: 'http://127.0.0.1:9/mcp' })).status).to.equal(201);
        for (const name of SOLO) {
          const steps = 1 + Math.floor(rand() * 10);
          const r = await api(url, 'POST', '/api/v1/agents', { name, instructions: script(`${name}-t${trial}`, steps) });
          expect(r.status, JSON.stringify(r.body)).to.equal(201);
        }
        const squad = await api(url, 'POST', '/api/v1/squads', {
          name: 'crew',
          members: MEMBERS.map((name) => ({ name, spec: { instructions: script(`${name}-t${trial}`, 1 + Math.floor(rand() * 10)) } })),
        });
        expect(squad.status, JSON.stringify(squad.body)).to.equal(201);
        for (const name of AGENTS) {
          // Squad members exist once the squad controller has made them.
          await eventually(async () => (await api(url, 'GET', `/api/v1/agents/${name}`)).status === 200, 20_000, `${name} to exist`);
          followers.set(name, new Follower(`${url}/api/v1/agents/${name}/ws`));
        }
        await eventually(async () => [...followers.values()].some((f) => f.events.some((e) => e.type === 'tool_call')), 60_000, 'a first tool call');

        // The kill: somewhere in the tasks, as the seed says.
        const killAfter = Math.round(200 + rand() * 8000);
        figures.killAfterMs.push(killAfter);
        await new Promise((r) => setTimeout(r, killAfter));
        const tree: ProcessId[] = processTree(first.child.pid!);
        first.child.kill('SIGKILL');
        await first.exited;
        figures.killedProcesses += tree.length;
        await eventually(async () => [...followers.values()].every((f) => f.closed), 10_000, 'followers to see the server gone');

        second = await start();
        figures.restartMs.push(second.readyMs);

        // Objects survive.
        expect(names((await api(url, 'GET', '/api/v1/connectors')).body.connectors)).to.deep.equal(['tools']);
        expect(names((await api(url, 'GET', '/api/v1/squads')).body.squads)).to.deep.equal(['crew']);
        expect(names((await api(url, 'GET', '/api/v1/agents')).body.agents)).to.deep.equal([...AGENTS].sort());

        // Every task ends: settled as interrupted, or finished by a worker the new server started.
        await eventually(
          async () => {
            const r = await api(url, 'GET', '/api/v1/agents');
            return (r.body.agents as { taskStatus: string }[]).every((a) => ['Complete', 'Error'].includes(a.taskStatus));
          },
          90_000,
          'every task to end',
        );

        for (const name of AGENTS) {
          const hist = await history(url, name);
          const bySeq = new Map(hist.map((e) => [e.seq, e]));
          const f = followers.get(name)!;
          // Every acknowledged event, as it was received.
          for (const ev of f.events) {
            figures.acknowledged++;
            const stored = bySeq.get(ev.seq);
            if (!stored) figures.lost++;
            expect(stored, `${name}: event ${ev.seq} (${ev.type}) acknowledged but not in history`).to.deep.equal(ev);
          }
          // One end per task: completed, or interrupted by the restart.
          const ends = hist.filter((e) => TERMINAL.includes(e.type));
          expect(
            ends.map((e) => e.task),
            `${name}: ${hist.map((e) => e.type).join(',')}`,
          ).to.deep.equal([1]);
          const end = ends[0];
          if (end.type === 'task_completed') figures.completed++;
          else {
            expect(end.type).to.equal('error');
            expect(end.payload, `${name}: ${JSON.stringify(end.payload)}`).to.deep.include({ reason: 'Interrupted' });
            figures.interrupted++;
          }
          expect(
            hist.map((e) => e.seq),
            `${name}: seqs`,
          ).to.deep.equal([...hist.keys()].map((i) => hist[0].seq + i));

          // A client resuming from what it saw gets the rest, once each.
          const resumed = new Follower(`${url}/api/v1/agents/${name}/ws?since=${f.lastSeq}`);
          try {
            const want = hist.filter((e) => e.seq > f.lastSeq).map((e) => e.seq);
            await eventually(async () => resumed.events.length >= want.length, 15_000, `${name}: resumed events`);
            await new Promise((r) => setTimeout(r, 200)); // anything extra would arrive now
            const got = resumed.events.map((e) => e.seq);
            figures.replayed += got.length;
            figures.duplicates += got.length - new Set(got).size + got.filter((s) => s <= f.lastSeq).length;
            expect(got, `${name}: resumed after ${f.lastSeq}`).to.deep.equal(want);
          } finally {
            resumed.close();
          }
        }

        // Nothing of the killed server lives on: its spawner, workers, sandboxes, engines, tools.
        await eventually(async () => stillAlive(tree).length === 0, 20_000, 'the killed server’s processes to go').catch((err: Error) => {
          const left = stillAlive(tree);
          figures.orphans += left.length;
          throw new Error(`${err.message}: ${left.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
        });
      } catch (err) {
        const out = [...first.output, '--- after restart ---', ...(second?.output ?? [])].slice(-40).join('\n');
        throw new Error(`${(err as Error).message}\nserver output:\n${out}`, { cause: err });
      } finally {
        for (const f of followers.values()) f.close();
        if (second) {
          second.child.kill('SIGTERM');
          await second.exited;
        }
      }
    });
  }

  it('lost no acknowledged event, left no process behind, and interrupted tasks at some point', () => {
    expect(figures.restartMs).to.have.length(TRIALS);
    expect(figures.lost).to.equal(0);
    expect(figures.orphans).to.equal(0);
    expect(figures.duplicates).to.equal(0);
    expect(figures.acknowledged).to.be.greaterThan(0);
    expect(figures.interrupted, 'some kills must land mid-task').to.be.greaterThan(0);
  });
});
