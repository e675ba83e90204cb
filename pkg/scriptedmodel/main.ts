// The scripted model in a process of its own (`serve --demo`, process.ts): the server forks it,
// it listens on loopback and reports its URL over IPC, and it goes when the server disconnects
// (a stop, or the server gone). Its key comes in the environment, not on the command line.

import { startScriptedModel } from './server.js';

// Ctrl-C reaches the whole process group: the server stops this process once its own workers
// are stopped, so engines still finishing a turn get their answer.
process.on('SIGINT', () => undefined);

const apiKey = process.env.AGENTPLANE_SCRIPTED_MODEL_KEY;
delete process.env.AGENTPLANE_SCRIPTED_MODEL_KEY;
const port = Number(process.env.AGENTPLANE_SCRIPTED_MODEL_PORT ?? 0);

const model = await startScriptedModel({ host: '127.0.0.1', port, keepRequests: false, ...(apiKey ? { apiKey } : {}) });
process.on('disconnect', () => {
  void model.close().finally(() => process.exit(0));
});
if (process.connected) process.send!({ url: model.url, port: model.port });
else await model.close();
