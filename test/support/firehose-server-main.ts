// An agentplane server (embedded home) whose workers are the stand-in firehose worker, run as a
// process of its own so a test can kill it with SIGKILL. Prints its URL as one line on stdout.
// Usage: firehose-server-main <data dir>

import { fileURLToPath } from 'node:url';
import { startServer } from '../../cmd/agentplane/serve.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { DEFAULT_PLUGINS } from '../../pkg/plugin/loader.js';
import { FIREHOSE_CHANNEL_LIMITS } from './firehose.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: firehose-server-main <data dir>');
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  dataDir,
  plugins: DEFAULT_PLUGINS,
  // The firehose worker never calls the model.
  model: { apiKey: 'sk-ant-unused-0000000000000000', baseUrl: 'http://127.0.0.1:9' },
  logger: createLogger({ level: 'silent' }),
  workerLogSink: () => undefined,
  workerMain: fileURLToPath(new URL('./firehose-worker.js', import.meta.url)),
  workerChannelLimits: FIREHOSE_CHANNEL_LIMITS,
  // Nothing trimmed: the test compares everything a client saw with what is stored.
  eventsPerAgent: 100_000_000,
});
process.stdout.write(`${server.url}\n`);
