// `serve --worker-niceness` (docs/decisions.md "Worker priority"): a task's tools run as nice as
// the flag says, relative to the server; the default is WORKER_NICENESS.
import { expect } from 'chai';
import { getPriority } from 'node:os';
import { WORKER_NICENESS } from '../../pkg/runtime/local/local-runtime.js';
import { EventClient, type Harness, startHarness } from '../support/harness.js';

async function toolNiceness(h: Harness, name: string): Promise<number> {
  const sent = await h.api('POST', '/api/v1/agents', { name, instructions: '@bash nice\n@say done' });
  expect(sent.status, sent.text).to.equal(201);
  // Without `since` the stream replays the current task from its start.
  const ws = new EventClient(`${h.url}/api/v1/agents/${name}/ws`);
  try {
    const evs = await ws.untilTaskEnd();
    const out = evs.find((e) => e.type === 'tool_result')!.payload as { output: string };
    return Number(out.output.trim());
  } finally {
    ws.close();
  }
}

for (const [flag, nicer] of [
  [undefined, WORKER_NICENESS],
  [3, 3],
] as const) {
  describe(`worker niceness: ${flag === undefined ? 'the default' : `--worker-niceness ${flag}`} (integration)`, function () {
    this.timeout(90_000);
    let h: Harness;
    before(async () => {
      h = await startHarness(flag === undefined ? {} : { workerNiceness: flag });
    });
    after(async () => {
      await h?.close();
    });

    it(`runs a task's tools ${nicer} nicer than the server`, async () => {
      expect(await toolNiceness(h, 'nicer')).to.equal(Math.min(19, getPriority(0) + nicer));
    });
  });
}
