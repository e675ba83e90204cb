// Log lines name each key once: a part inside another part, and an agent's logger made from one
// that already carries the agent, each write a key a single time.

import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { agentLogger, componentLogger, createLogger } from '../../pkg/observability/logger.js';
import { repeatedKeys } from '../support/json-keys.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (d) => chunks.push(String(d)));
  return { logger: createLogger({ destination: out, level: 'info' }), lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('logger', () => {
  it('a part inside another keeps the outer component and is named by subcomponent', () => {
    const { logger, lines } = capture();
    componentLogger(componentLogger(logger, 'runtime'), 'hub').info('hello');
    const [line] = lines();
    expect(repeatedKeys(line)).to.deep.equal([]);
    expect(JSON.parse(line)).to.include({ component: 'runtime', subcomponent: 'hub', msg: 'hello' });
  });

  it('refuses a third level rather than write a key twice', () => {
    const { logger } = capture();
    const hub = componentLogger(componentLogger(logger, 'runtime'), 'hub');
    expect(() => componentLogger(hub, 'deeper')).to.throw(/already has a subcomponent/);
  });

  it('an agent logger made from one that carries the agent binds it once', () => {
    const { logger, lines } = capture();
    agentLogger(agentLogger(componentLogger(logger, 'model-proxy', { namespace: 'team-a' }), 'team-a', 'bot'), 'team-a', 'bot').warn('x');
    const [line] = lines();
    expect(repeatedKeys(line)).to.deep.equal([]);
    expect(JSON.parse(line)).to.include({ component: 'model-proxy', namespace: 'team-a', name: 'bot' });
  });

  it('the key scan finds a repeated key that JSON.parse would hide', () => {
    expect(repeatedKeys('{"a":1,"b":{"a":2},"c":"a\\",\\"a","a":3}')).to.deep.equal(['a']);
  });
});
