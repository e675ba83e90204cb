import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';

import { startScriptedModelProcess, type ScriptedModelProcess } from '../../pkg/scriptedmodel/index.js';
import { alive } from '../support/server-process.js';
import { until } from '../support/waiting.js';

const KEY = 'sk-process-test';
const TOOLS = [{ name: 'Bash', description: 'run a command', input_schema: { type: 'object', properties: {} } }];

/** A non-streaming Messages API call; the answer's text, or the status when it failed. */
async function say(url: string, words: string, key = KEY): Promise<string | number> {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-x', max_tokens: 100, tools: TOOLS, messages: [{ role: 'user', content: `@say ${words}` }] }),
  });
  if (res.status !== 200) return res.status;
  const msg = (await res.json()) as { content: { type: string; text: string }[] };
  return msg.content.map((b) => b.text).join('');
}

describe('the scripted model in its own process (serve --demo)', function () {
  this.timeout(30_000);
  let model: ScriptedModelProcess | undefined;
  afterEach(async () => model?.close());

  it('answers on loopback from another process, with the key, and is gone once closed', async () => {
    model = await startScriptedModelProcess({ apiKey: KEY });
    expect(model.url).to.equal(`http://127.0.0.1:${model.port}`);
    const pid = model.pid()!;
    expect(pid).to.be.a('number').and.not.equal(process.pid);
    expect(await say(model.url, 'from a child')).to.equal('from a child');
    expect(await say(model.url, 'no', 'wrong-key')).to.equal(401);
    await model.close();
    expect(alive(pid)).to.equal(false);
    expect(
      await fetch(model.url).then(
        () => 'answered',
        () => 'refused',
      ),
    ).to.equal('refused');
  });

  it('is started again on the same port when it dies, and says so', async () => {
    const trouble: string[] = [];
    model = await startScriptedModelProcess({ apiKey: KEY, onTrouble: (what) => trouble.push(what) });
    const first = model.pid()!;
    process.kill(first, 'SIGKILL');
    await until('a new process', () => model!.pid() !== first && trouble.length > 0, 10_000);
    await until('the model to answer again', async () => (await say(model!.url, 'again').catch(() => 0)) === 'again', 10_000);
    expect(trouble[0]).to.match(/exited \(SIGKILL\); starting it again/);
  });

  it('ignores SIGINT (Ctrl-C reaches the whole process group; the server stops it)', async () => {
    model = await startScriptedModelProcess({ apiKey: KEY });
    process.kill(model.pid()!, 'SIGINT');
    await sleep(300);
    expect(await say(model.url, 'still here')).to.equal('still here');
  });
});
