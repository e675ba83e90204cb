// A full disk and a read-only data directory, on real file systems the test mounts (it runs as
// root): a small tmpfs filled up with a file, then freed; a read-only bind remount of a data
// directory, then back to read-write (docs/reliability.md "Full disk, read-only data directory").
// Clients get 503 ServiceUnavailable with the fault as the cause, never a bare 500; the log says
// why; the server stays up and its databases intact; everything works again once space returns.

import { execFile, execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { getAgent, runTask } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
const B = '/apis/agentplane.io/v1alpha1';

/** Writes to `path` until the file system says ENOSPC: big chunks, then single pages. */
function fillUp(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 4096]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** SQLite's own check of a database file: "ok" when nothing is corrupt. */
function integrity(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

describe('storage faults (integration)', function () {
  this.timeout(240_000);

  describe('a full disk', () => {
    let mnt: string;
    let dataDir: string;
    let h: Harness;
    before(async () => {
      mnt = mkdtempSync(join(tmpdir(), 'agentplane-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mnt]);
      dataDir = join(mnt, 'data');
      h = await startHarness({ dataDir });
    });
    after(async () => {
      await h?.close();
      execFileSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    });

    it('answers writes 503 StorageFull and logs why, keeps serving reads, and recovers when space returns', async () => {
      const steady = await runTask(h, 'steady', '@bash echo kept > note.txt\n@say saved');
      expect(steady.at(-1)!.type).to.equal('task_completed');
      expect((await h.api('POST', '/api/v1/connectors', { name: 'tools', url: 'http://127.0.0.1:9/mcp' })).status).to.equal(201);

      // A task in flight when the disk fills: its next tool writes into the workspace (same disk).
      const r = await h.api('POST', '/api/v1/agents', {
        name: 'writer',
        instructions: `@bash node -e "setTimeout(() => {}, 3000)"\n@bash df -k . 2>&1; head -c 4000000 /dev/zero > big.bin; echo "exit=$?"\n@say wrote`,
      });
      expect(r.status).to.equal(201);
      const ws = new EventClient(`${h.url}/api/v1/agents/writer/ws`);
      await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));

      const filler = join(mnt, 'filler');
      const filled = fillUp(filler);
      expect(filled).to.be.greaterThan(0);

      try {
        // Writes: each answer is a success or 503 with the fault, never a 500. A write that fits
        // in space SQLite already holds may still succeed; a large one needs new pages.
        const statuses: number[] = [];
        let refusal: any;
        for (let i = 0; i < 10 && !refusal; i++) {
          const w = await h.api('POST', '/api/v1/agents', { name: `big-${i}`, instructions: `${'x'.repeat(200_000)}\n@say hi` });
          statuses.push(w.status);
          if (w.status === 503) refusal = w.body;
        }
        expect(
          statuses.every((s) => s === 201 || s === 503),
          `statuses ${statuses.join(',')}`,
        ).to.equal(true);
        expect(refusal, `statuses ${statuses.join(',')}`).to.not.equal(undefined);
        expect(refusal).to.deep.include({ reason: 'ServiceUnavailable', code: 503 });
        expect(refusal.error).to.match(/^storage unavailable: the disk holding the server’s data is full \(SQLITE_FULL\); retry once space is freed$/);
        expect(refusal.details.causes).to.deep.equal([{ field: '', reason: 'StorageFull', message: 'SQLITE_FULL' }]);

        // The aggregated API answers a metav1.Status with the same reason.
        const k = await h.api('POST', `${B}/namespaces/default/agents`, {
          apiVersion: 'agentplane.io/v1alpha1',
          kind: 'Agent',
          metadata: { name: 'big-kube' },
          spec: { instructions: `${'y'.repeat(200_000)}\n@say hi` },
        });
        expect(k.status, k.text).to.equal(503);
        expect(k.body).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503 });
        expect(k.body.details.causes[0]).to.deep.include({ reason: 'StorageFull' });

        // Secrets live in files: ENOSPC is the same fault.
        const s = await h.api('POST', '/api/v1/secrets', { name: 'big-secret', data: { token: 'z'.repeat(60_000) } });
        expect(s.status, s.text).to.equal(503);
        expect(s.body.details.causes[0]).to.deep.include({ reason: 'StorageFull' });

        // The log says what is wrong; the server is up and reads work.
        expect(h.logs.some((l) => l.includes('storage unavailable') && l.includes('SQLITE_FULL'))).to.equal(true);
        expect((await h.api('GET', '/readyz')).status).to.equal(200);
        expect((await h.api('GET', '/api/v1/agents/steady')).body.taskStatus).to.equal('Complete');
        expect((await h.api('GET', '/api/v1/agents/steady/events?limit=200')).status).to.equal(200);

        // The task in flight reaches its write and the disk refuses it; the server lives on.
        // The tool's output reaches the model whether or not its event could be stored.
        const seen = await eventually(async () => h.model.requests.find((q) => q.lastToolResult?.includes('Filesystem')), 60_000, 'the write to be tried');
        expect(seen.lastToolResult, 'the workspace is on the full disk').to.match(/ 100% [^]*No space left on device[^]*exit=1/);
        await new Promise((res) => setTimeout(res, 1000));
        expect((await h.api('GET', '/healthz')).status).to.equal(200);
      } finally {
        unlinkSync(filler);
      }

      // Space is back: the task ends, once, and new writes succeed.
      const writer = await eventually(
        async () => {
          const a = await getAgent(h, 'writer');
          return a && ['Complete', 'Error'].includes(a.taskStatus) && a;
        },
        60_000,
        'the writer’s task to end',
      );
      const hist = (await h.api('GET', '/api/v1/agents/writer/events?limit=200')).body.events as AgentEvent[];
      ws.close();
      const ends = hist.filter((e) => ['task_completed', 'task_cancelled', 'error'].includes(e.type));
      expect(ends, JSON.stringify(hist.map((e) => [e.seq, e.type]))).to.have.length(1);
      // The task ended as the model chose, after seeing the tool's error. An event that came while
      // the disk was full was either stored, in space the event log already held (its write-ahead
      // log is reused once checkpointed), or dropped and logged; none is half there. The dropping
      // itself: test/unit/agent-controller-runtime.test.ts.
      expect(ends[0].type).to.equal('task_completed');
      expect(writer.lastTaskMessage).to.equal('wrote');
      const dropped = h.logs.some((l) => l.includes('an event could not be stored and is dropped'));
      if (!dropped)
        expect(
          hist.map((e) => e.type),
          'every event of the task is stored',
        ).to.include.members(['task_started', 'tool_call', 'tool_result', 'task_completed']);
      const seqs = hist.map((e) => e.seq);
      expect(seqs, 'no gap in seqs').to.deep.equal(seqs.map((_, i) => seqs[0] + i));
      console.log(`      full disk: the writer's stored events ${hist.map((e) => e.type).join(', ')}; ended ${writer.taskStatus}`);

      const after = await h.api('POST', '/api/v1/agents', { name: 'big-after', instructions: `${'x'.repeat(200_000)}\n@say fits again` });
      expect(after.status, after.text).to.equal(201);
      const fresh = await runTask(h, 'fresh', '@bash cat ../steady/note.txt 2>/dev/null; echo fine > ok.txt && cat ok.txt\n@say recovered');
      expect(fresh.at(-1)!.type).to.equal('task_completed');
      expect(readFileSync(join(h.server.local!.workspace({ namespace: 'default', name: 'steady' }), 'note.txt'), 'utf8')).to.equal('kept\n');
      expect((await h.api('GET', '/api/v1/connectors/tools')).status).to.equal(200);
    });

    it('leaves both databases intact', async () => {
      await h.close();
      h = undefined as unknown as Harness;
      expect(integrity(join(dataDir, 'state.db'))).to.equal('ok');
      expect(integrity(join(dataDir, 'events.db'))).to.equal('ok');
    });
  });

  describe('a read-only data directory', () => {
    let src: string;
    let mnt: string;
    before(() => {
      src = mkdtempSync(join(tmpdir(), 'agentplane-ro-src-'));
      mnt = mkdtempSync(join(tmpdir(), 'agentplane-ro-'));
      execFileSync('mount', ['--bind', src, mnt]);
    });
    after(() => {
      execFileSync('umount', [mnt]);
      rmSync(mnt, { recursive: true, force: true });
      rmSync(src, { recursive: true, force: true });
    });

    it('cannot be made read-only under a running server (the kernel refuses: busy)', async () => {
      const h = await startHarness({ dataDir: mnt });
      try {
        expect((await runTask(h, 'keeper', '@bash echo kept > note.txt\n@say saved')).at(-1)!.type).to.equal('task_completed');
        const remount = await run('mount', ['-o', 'remount,ro,bind', mnt]).then(
          () => 'remounted',
          (e: { stderr: string }) => e.stderr,
        );
        expect(remount).to.match(/busy/);
        expect((await h.api('POST', '/api/v1/agents', { name: 'second', instructions: '@say still writable' })).status).to.equal(201);
      } finally {
        await h.close();
      }
    });

    it('refuses to start on it, saying so, and starts with everything intact once it is writable again', async () => {
      execFileSync('mount', ['-o', 'remount,ro,bind', mnt]);
      try {
        let err: Error | undefined;
        await startHarness({ dataDir: mnt }).then(
          (h) => h.close(),
          (e: Error) => (err = e),
        );
        expect(err?.message).to.equal(`the data directory ${mnt} is not writable (EROFS): its file system is mounted read-only; remount it read-write`);
        // The CLI: exit code 2 and the same line.
        const out = await run(process.execPath, [MAIN, 'serve', '--port', '0', '--data-dir', mnt], { env: { ...process.env, AGENTPLANE_TOKEN_FILE: '' } }).then(
          () => ({ code: 0, stderr: '' }),
          (e: { code: number; stderr: string }) => e,
        );
        expect(out.code).to.equal(2);
        expect(out.stderr).to.include(`cannot start: the data directory ${mnt} is not writable (EROFS)`);
      } finally {
        execFileSync('mount', ['-o', 'remount,rw,bind', mnt]);
      }
      expect(integrity(join(mnt, 'state.db'))).to.equal('ok');
      const h = await startHarness({ dataDir: mnt });
      try {
        expect((await getAgent(h, 'keeper'))?.taskStatus).to.equal('Complete');
        const evs = await runTask(h, 'keeper', '@bash cat note.txt\n@say read');
        expect(evs.at(-1)!.type).to.equal('task_completed');
        expect(JSON.stringify(evs)).to.contain('kept');
      } finally {
        await h.close();
      }
    });
  });
});
