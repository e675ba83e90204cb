// The tool sandbox (docs/security.md "Tool sandbox"): a real agent's real Bash tool tries to read
// what belongs to the server and other agents, and cannot; its own workspace still works; a
// worker that dies takes its whole process tree with it.

import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { AgentEvent } from '../../pkg/api/event.js';
import { runTask, sleepingAgent } from '../support/agents.js';
import { EventClient, eventually, type Harness, startHarness } from '../support/harness.js';
import { processesWith } from '../support/processes.js';
import { procStat } from '../../pkg/runtime/local/process-group.js';
import { SANDBOX_NODE } from '../../pkg/runtime/local/sandbox.js';

const SIBLING_MARKER = 'sibling-marker-8d3f0a61';
const SECRET_VALUE = 'stored-secret-c41e97b2';
// In another process's environment and command line: tools see no process outside their sandbox.
const CANARY = 'server-env-canary-5a7e2c90';

const outputs = (evs: AgentEvent[]): string[] => evs.filter((e) => e.type === 'tool_result').map((e) => (e.payload as { output: string }).output);

/** The worker's node process: in the runtime child's process group, running the worker's main on the sandbox's node. */
function workerNodePid(groupLeader: number): number | undefined {
  for (const pid of processesWith('agentplane-worker/main.js')) {
    try {
      const pgrp = Number(procStat(pid)?.[2]);
      const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
      if (pgrp === groupLeader && argv0 === SANDBOX_NODE) return pid;
    } catch {
      // exited meanwhile
    }
  }
  return undefined;
}

describe('tool sandbox (integration)', function () {
  let h: Harness;
  let neighbour: ChildProcess;
  before(async () => {
    neighbour = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)', CANARY], {
      env: { ...process.env, AGENTPLANE_TEST_CANARY: CANARY },
      stdio: 'ignore',
    });
    h = await startHarness();
  });
  after(async () => {
    neighbour?.kill('SIGKILL');
    await h?.close();
  });

  describe('an agent probing outside its workspace', () => {
    let out: string[];
    before(async () => {
      expect(h.server.local!.sandboxed, 'bubblewrap must be usable for these tests (.ci/run installs it)').to.equal(true);
      const secret = await h.api('POST', '/api/v1/secrets', { name: 'probe-token', data: { token: SECRET_VALUE } });
      expect(secret.status).to.equal(201);
      await runTask(h, 'sibling', `@bash echo ${SIBLING_MARKER} > private.txt\n@say done`);
      const d = h.dataDir;
      const probe = (cmd: string): string => `@bash ${cmd} 2>&1; echo "exit=$?"`;
      const evs = await runTask(
        h,
        'prober',
        [
          probe(`cat ${join(d, 'workspaces', 'default', 'sibling', 'private.txt')}`),
          probe(`ls -A ${d} ${join(d, 'workspaces', 'default')}`),
          probe(`head -c 64 ${join(d, 'state.db')}`),
          probe(`cat ${join(d, 'secrets', 'default')}/*.json`),
          // The pattern goes through a file so that no command line holds it.
          `@bash printf '%s-%s' ${CANARY.replace('-', ' ')} > /tmp/pattern; grep -ralf /tmp/pattern /proc/*/environ /proc/*/cmdline 2>/dev/null; echo searched`,
          probe(`ls /proc | grep -c '^[0-9]'; tr '\\0' ' ' < /proc/1/cmdline`),
          probe('echo mine > own.txt && cat own.txt'),
          probe(`touch ${join(d, 'planted')}`),
          '@say probed',
        ].join('\n'),
      );
      out = outputs(evs);
      expect(out, JSON.stringify(out)).to.have.length(8);
    });

    it('cannot read a sibling agent’s workspace', () => {
      expect(out[0]).to.contain('No such file');
      expect(out[0]).not.to.contain(SIBLING_MARKER);
    });

    it('sees the data directory as empty but for its own workspace', () => {
      expect(out[1])
        .to.match(/workspaces/)
        .and.to.match(/prober/);
      expect(out[1]).not.to.match(/state\.db|events\.db|secrets|sibling/);
    });

    it('cannot read state.db or a stored secret file', () => {
      expect(out[2]).to.contain('No such file');
      expect(out[2]).not.to.contain('SQLite');
      expect(out[3]).to.contain('No such file');
      expect(out[3]).not.to.contain(SECRET_VALUE);
      expect(readFileSync(join(h.dataDir, 'state.db')).subarray(0, 6).toString()).to.equal('SQLite'); // it is there
    });

    it('sees only the sandbox’s own processes in /proc, and no other process’s environment or command line', () => {
      expect(out[4]).to.contain('searched');
      expect(out[4]).not.to.match(/environ|cmdline/);
      expect(readFileSync(`/proc/${neighbour.pid}/environ`, 'utf8')).to.contain(CANARY); // it is there
      const [count, init] = out[5].split('\n');
      expect(Number(count)).to.be.within(2, 20);
      expect(init).to.contain('bwrap');
    });

    it('writes and reads back its own workspace, which the server sees too', () => {
      expect(out[6]).to.contain('mine').and.to.contain('exit=0');
      expect(readFileSync(join(h.server.local!.workspace({ namespace: 'default', name: 'prober' }), 'own.txt'), 'utf8')).to.equal('mine\n');
    });

    it('cannot write outside its workspace: the data directory is a read-only stand-in', () => {
      expect(out[7]).to.contain('Permission denied').and.not.to.contain('exit=0');
      expect(readdirSync(h.dataDir)).not.to.include('planted');
    });
  });

  describe('squad members', () => {
    let out: string[];
    before(async () => {
      for (const n of ['ann', 'ben']) await sleepingAgent(h, n);
      await runTask(h, 'loner', `@bash echo ${SIBLING_MARKER} > private.txt\n@say done`);
      const r = await h.api('POST', '/api/v1/squads', { name: 'pair', members: [{ ref: { name: 'ann' } }, { ref: { name: 'ben' } }] });
      expect(r.status).to.equal(201);
      const evs = await runTask(
        h,
        'ann',
        [
          '@bash cat $AGENTPLANE_SQUAD_DIR/ben/me.txt',
          '@bash echo x > $AGENTPLANE_SQUAD_DIR/ben/planted.txt 2>&1; echo "exit=$?"',
          `@bash cat ${join(h.dataDir, 'workspaces', 'default', 'loner', 'private.txt')} 2>&1; echo "exit=$?"`,
          '@say done',
        ].join('\n'),
      );
      out = outputs(evs);
      expect(out, JSON.stringify(out)).to.have.length(3);
    });

    it('read their peers’ workspaces through $AGENTPLANE_SQUAD_DIR', () => {
      expect(out[0]).to.equal('ben');
    });

    it('cannot write a peer’s workspace', () => {
      expect(out[1]).to.match(/Read-only file system/);
      expect(readdirSync(h.server.local!.workspace({ namespace: 'default', name: 'ben' }))).not.to.include('planted.txt');
    });

    it('cannot read the workspace of an agent outside the squad', () => {
      expect(out[2]).to.contain('No such file');
      expect(out[2]).not.to.contain(SIBLING_MARKER);
    });
  });

  describe('a worker that dies takes its whole process tree with it', () => {
    it('SIGKILL of the worker process (the runtime’s child) ends its running tool', async () => {
      await killToolDuring(h, 'doomed', 'sandbox-probe-31337', (leader) => leader);
    });

    it('SIGKILL of the worker’s node process inside the sandbox ends its running tool', async () => {
      await killToolDuring(h, 'doomed-too', 'sandbox-probe-27182', (leader) => workerNodePid(leader));
    });
  });
});

describe('without the tool sandbox (integration)', function () {
  let h: Harness;
  before(async () => {
    h = await startHarness({ sandbox: 'none' });
  });
  after(async () => {
    await h?.close();
  });

  it('SIGKILL of the worker still ends its running tool, which the engine started in a session of its own', async () => {
    expect(h.server.local!.sandboxed).to.equal(false);
    await killToolDuring(h, 'doomed-bare', 'sandbox-probe-16180', (leader) => leader);
  });
});

/** Runs a long tool in a new agent, SIGKILLs `victim(worker group leader)`, and requires the tool gone within 10 s. */
async function killToolDuring(h: Harness, name: string, marker: string, victim: (leader: number) => number | undefined): Promise<void> {
  const r = await h.api('POST', '/api/v1/agents', { name, instructions: `@bash node -e "setTimeout(() => {}, 300000)" ${marker}\n@say never` });
  expect(r.status).to.equal(201);
  const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws`);
  try {
    await ws.until((evs) => evs.some((e) => e.type === 'tool_call'));
    const tools = await eventually(async () => processesWith(marker).length > 0 && processesWith(marker), 15_000, 'the tool process');
    const leader = h.server.local!.pid({ namespace: 'default', name })!;
    const pid = victim(leader);
    expect(pid, 'process to kill').to.be.a('number');
    process.kill(pid!, 'SIGKILL');
    await eventually(async () => processesWith(marker).length === 0, 10_000, `tool processes ${tools.join(',')} to be gone`);
    await ws.untilTaskEnd();
    expect(ws.events.at(-1)!.type).to.equal('error');
  } finally {
    ws.close();
  }
}
