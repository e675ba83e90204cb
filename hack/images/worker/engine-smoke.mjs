// Runs one real engine task inside the worker image, as the runtime will: the SDK's engine
// binary against the project's scripted model (pkg/scriptedmodel) on loopback, as uid 10001,
// on a read-only root filesystem with /tmp a tmpfs and HOME the /workspace volume. The task
// uses the Bash tool (bash, rg, git) and writes a file in the workspace; a second task resumes
// the session from /workspace/.claude. Used by hack/images/verify-containerd.sh:
//   node /smoke/engine-smoke.mjs   (cwd /opt/agentplane; exits 0 and prints "engine ok")
import { readdirSync, readFileSync } from 'node:fs';
import { startScriptedModel } from '/opt/agentplane/dist/pkg/scriptedmodel/index.js';
import { runTask } from '/opt/agentplane/dist/pkg/worker/engine.js';

const model = await startScriptedModel({ host: '127.0.0.1', apiKey: 'smoke-key' });
const env = { workspace: '/workspace', apiKey: 'smoke-key', baseUrl: model.url };
const task = (taskId, instructions, resume) => ({
  type: 'task', taskId, instructions, model: 'scripted-model', role: 'worker', mcpServers: [], ...(resume ? { resume } : {}),
});
const run = async (t) => {
  const events = [];
  const outcome = await runTask(t, env, (e) => events.push(e), new AbortController().signal);
  if (outcome.kind !== 'completed') {
    console.error(JSON.stringify(events, null, 2));
    throw new Error(`task ${t.taskId}: ${outcome.kind}`);
  }
  return { outcome, events };
};

try {
  const first = await run(task(1,
    '@bash echo "uid $(id -u) home $HOME" > hello.txt && rg --version | sed -n 1p >> hello.txt && git init -q repo && git -C repo status --short && cat hello.txt\n@say done'));
  const hello = readFileSync('/workspace/hello.txt', 'utf8');
  if (!hello.startsWith('uid 10001 home /workspace\nripgrep')) throw new Error(`hello.txt: ${hello}`);
  const tool = first.events.find((e) => e.type === 'tool_result');
  if (!tool || tool.payload.isError) throw new Error(`bash tool: ${JSON.stringify(tool)}`);
  await run(task(2, '@bash cat hello.txt\n@say resumed', first.outcome.sessionId));
  console.log(`engine ok: ${hello.trim().replace(/\n/g, '; ')}; session ${first.outcome.sessionId} resumed`);
  // What the engine left in /tmp (the only writable place besides the workspace).
  const tmp = readdirSync('/tmp', { recursive: true }).sort();
  console.log(`/tmp after the tasks: ${tmp.length ? tmp.join(' ') : '(empty)'}`);
} finally {
  await model.close();
}
