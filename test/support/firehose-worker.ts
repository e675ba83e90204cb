// A stand-in worker for the event benchmark (bench/wire.ts) and the event durability test: it
// speaks the worker control channel like cmd/agentplane-worker (dial, bearer token, hello,
// task -> events) but runs no engine. For
// a task whose instructions read `firehose {"count":N,"rate":R,"size":S}` it sends task_started,
// N text events of S characters (R per second, 0 for as fast as the socket takes them) and
// task_completed; any other task completes at once. Each text starts with the wall-clock time it
// was sent (ms, fractional), so the reader can time it.
//
// `--bare <ws url>`: the same producer for the bare relay baseline, dialing it instead of the
// server; the relay hands it the same task message.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { EventDraft } from '../../pkg/api/event.js';
import { CONTROL_PATH, type ServerMessage, type TaskMessage, type WorkerMessage } from '../../pkg/api/worker-protocol.js';
import { serverConnection, workerSecrets } from '../../pkg/worker/launch.js';
import { FIREHOSE, type FirehoseSpec, wallMs } from './firehose.js';

/** Bytes the producer lets wait in its socket before it waits itself. */
const HIGH_WATER = 1 << 20;
const BATCH = 100;

async function main(): Promise<void> {
  const bare = process.argv[2] === '--bare' ? process.argv[3] : undefined;
  const url = bare ?? new URL(CONTROL_PATH, process.env.AGENTPLANE_SERVER_URL).toString().replace(/^http/, 'ws');
  const ws = new WebSocket(
    url,
    bare ? {} : { headers: { authorization: `Bearer ${(await workerSecrets()).token}` }, ...serverConnection(process.env.AGENTPLANE_SERVER_SOCKET) },
  );
  const send = (msg: WorkerMessage): void => ws.send(JSON.stringify(msg));
  ws.on('open', () => send({ type: 'hello' }));
  ws.on('message', (data) => {
    const msg = JSON.parse((data as Buffer).toString()) as ServerMessage;
    if (msg.type === 'task') void run(msg, send, ws);
  });
  // Stopped by the runtime (revoked, 4401) or the relay: nothing left to do.
  ws.on('close', () => process.exit(0));
  ws.on('error', () => process.exit(1));
}

async function run(task: TaskMessage, send: (msg: WorkerMessage) => void, ws: WebSocket): Promise<void> {
  const event = (ev: EventDraft): void => send({ type: 'event', taskId: task.taskId, event: ev });
  const t0 = Date.now();
  event({ type: 'task_started', payload: { instructions: task.instructions } });
  if (task.instructions.startsWith(FIREHOSE)) {
    const spec = JSON.parse(task.instructions.slice(FIREHOSE.length)) as FirehoseSpec;
    const text = (): void => {
      const stamp = wallMs().toFixed(3);
      event({ type: 'text', payload: { content: `${stamp} ${'x'.repeat(Math.max(0, spec.size - stamp.length - 1))}` } });
    };
    const start = performance.now();
    for (let sent = 0; sent < spec.count;) {
      if (spec.rate > 0) {
        const due = Math.min(spec.count, Math.floor(((performance.now() - start) * spec.rate) / 1000) + 1);
        for (; sent < due; sent++) text();
        await sleep(1);
      } else {
        for (const end = Math.min(spec.count, sent + BATCH); sent < end; sent++) text();
        while (ws.bufferedAmount > HIGH_WATER) await sleep(1);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  event({
    type: 'task_completed',
    payload: { result: 'done', cost_usd: 0, duration_ms: Date.now() - t0, turns: 1, stop_reason: 'end_turn', session_id: '' },
  });
}

void main();
