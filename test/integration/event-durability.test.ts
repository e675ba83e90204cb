// Durability of acknowledged events: an event is handed to subscribers only once its group
// commit is done, so one a subscriber saw survives the process being killed (SIGKILL) right after.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

import { SqliteEventStore } from '../../plugins/event-store-sqlite/sqlite-event-store.js';

const WRITER = fileURLToPath(new URL('../support/event-writer-main.js', import.meta.url));
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
        child.stdout!.on('data', (chunk: Buffer) => {
          const lines = (rest + String(chunk)).split('\n');
          rest = lines.pop()!;
          for (const line of lines) {
            const [uid, seq] = line.split(' ');
            let seqs = acked.get(uid!);
            if (!seqs) acked.set(uid!, (seqs = []));
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
        expect(seqs).to.deep.equal(Array.from({ length: seqs.length }, (_, i) => i + 1), `delivery order of ${uid}`);
        const stored = (await store.since(ref, 0, seqs.length)).map((e) => e.seq);
        expect(stored, `stored events of ${uid}`).to.deep.equal(seqs);
      }
    } finally {
      await store.close();
    }
  });
});
