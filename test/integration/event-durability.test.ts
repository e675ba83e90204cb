// Durability of acknowledged events: an event is handed to subscribers only once its group
// commit is done, so one a subscriber saw survives the process being killed (SIGKILL) right after.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

import Database from 'better-sqlite3';
import WebSocket from 'ws';

import type { AgentEvent } from '../../pkg/api/event.js';
import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';
import { firehoseTask } from '../support/firehose.js';
import { eventually } from '../support/harness.js';

const WRITER = fileURLToPath(new URL('../support/event-writer-main.js', import.meta.url));
const SERVER = fileURLToPath(new URL('../support/firehose-server-main.js', import.meta.url));
const AGENTS = 20;

describe('event durability', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentplane-durability-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every event delivered to a subscriber when the process is killed with SIGKILL mid-stream', async () => {
    const file = join(dir, 'events.db');
    const child = spawn(process.execPath, [WRITER, file, String(AGENTS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    const acked = new Map<string, number[]>();
    let count = 0;
    let rest = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
        child.stdout.on('data', (chunk: Buffer) => {
          const lines = (rest + String(chunk)).split('\n');
          rest = lines.pop()!;
          for (const line of lines) {
            const [uid, seq] = line.split(' ');
            let seqs = acked.get(uid);
            if (!seqs) acked.set(uid, (seqs = []));
            seqs.push(Number(seq));
            // Kill mid-stream, with appends still queued and a batch possibly being written.
            if (++count === 10_000) {
              child.kill('SIGKILL');
              resolve();
            }
          }
        });
      });
    } finally {
      child.kill('SIGKILL');
      await exited;
    }

    const store = new SqliteEventStore(file);
    try {
      expect(acked.size).to.equal(AGENTS);
      for (const [uid, seqs] of acked) {
        const ref = { namespace: 'default', name: `a${uid.slice(1)}`, uid };
        // Delivered in seq order, none twice or skipped.
        expect(seqs).to.deep.equal(
          Array.from({ length: seqs.length }, (_, i) => i + 1),
          `delivery order of ${uid}`,
        );
        const stored = (await store.since(ref, 0, seqs.length)).map((e) => e.seq);
        expect(stored, `stored events of ${uid}`).to.deep.equal(seqs);
      }
    } finally {
      await store.close();
    }
  });

  it('keeps every event a WebSocket client received when the server is killed with SIGKILL mid-stream (worker -> channel -> store -> socket)', async () => {
    const child = spawn(process.execPath, [SERVER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    const received: number[] = [];
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`server exited early (${code})`)));
        child.stdout.once('data', (chunk: Buffer) => resolve(String(chunk).trim()));
      });
      const post = (instructions: string) =>
        fetch(`${url}/api/v1/agents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'hose', instructions }),
        });
      expect((await post('warm up')).status).to.equal(201);
      await eventually(
        async () => ((await (await fetch(`${url}/api/v1/agents/hose`)).json()) as { taskStatus: string }).taskStatus === 'Complete',
        30_000,
        'warm-up task',
      );
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v1/agents/hose/ws?since=0`);
      ws.on('message', (d) => {
        const ev = JSON.parse((d as Buffer).toString()) as AgentEvent;
        if (ev.type === 'text') received.push(ev.seq);
        // Killed mid-stream: the worker is still sending, batches are being committed.
        if (received.length === 5_000) child.kill('SIGKILL');
      });
      ws.on('error', () => undefined); // the server goes away
      await new Promise((resolve) => ws.on('open', resolve));
      expect((await post(firehoseTask({ count: 1_000_000, rate: 0, size: 100 }))).status).to.equal(200);
      await exited;
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(received.length).to.be.at.least(5_000);
    const db = new Database(join(dir, 'events.db'), { readonly: true });
    try {
      const stored = new Set(
        db
          .prepare<[], { seq: number }>("SELECT seq FROM events WHERE name = 'hose' AND type = 'text'")
          .all()
          .map((r) => r.seq),
      );
      const missing = received.filter((seq) => !stored.has(seq));
      expect(missing, `${missing.length} of ${received.length} received events not stored`).to.deep.equal([]);
    } finally {
      db.close();
    }
  });
});
