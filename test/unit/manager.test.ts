import { expect } from 'chai';

import { Manager, StartError } from '../../pkg/manager/manager.js';
import { createLogger } from '../../pkg/observability/logger.js';
import { rejection } from '../support/assert.js';

describe('Manager', () => {
  const logger = createLogger({ level: 'silent' });

  const recorder = (log: string[], name: string, failStart = false) => ({
    name,
    start: () => {
      if (failStart) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
    },
    stop: () => void log.push(`stop ${name}`),
  });

  it('starts runnables in order and stops them in reverse, once', async () => {
    const log: string[] = [];
    const m = new Manager(logger);
    m.add(recorder(log, 'store'));
    m.add(recorder(log, 'informers'));
    m.onStop('file', () => void log.push('close file'));
    m.add(recorder(log, 'http'));
    await m.start();
    await Promise.all([m.stop(), m.stop()]);
    expect(log).to.deep.equal(['start store', 'start informers', 'start http', 'stop http', 'close file', 'stop informers', 'stop store']);
  });

  it('a failed start stops what had started and names the runnable', async () => {
    const log: string[] = [];
    const m = new Manager(logger);
    m.add(recorder(log, 'store'));
    m.add(recorder(log, 'runtime', true));
    m.add(recorder(log, 'http'));
    const err = await rejection(m.start(), StartError);
    expect(err.runnable).to.equal('runtime');
    expect(err.message).to.equal('runtime: runtime cannot start');
    expect(log).to.deep.equal(['start store', 'stop store']);
  });

  it('a later start starts only what was added since; a failing stop does not stop the others', async () => {
    const log: string[] = [];
    const m = new Manager(logger);
    m.add(recorder(log, 'a'));
    await m.start();
    m.add({ name: 'b', start: () => void log.push('start b'), stop: () => Promise.reject(new Error('boom')) });
    await m.start();
    await m.stop();
    expect(log).to.deep.equal(['start a', 'start b', 'stop a']);
  });
});
