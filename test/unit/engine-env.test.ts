import { expect } from 'chai';

import { engineEnvironment } from '../../pkg/worker/engine.js';
import { systemPromptFor } from '../../pkg/worker/role-prompts.js';

describe('role prompts', () => {
  it('manager and worker prompts differ and name their role', () => {
    const manager = systemPromptFor('manager');
    const worker = systemPromptFor('worker');
    expect(manager).to.not.equal(worker);
    expect(manager).to.contain('manager agent');
    expect(worker).to.contain('worker agent');
    expect(manager).to.contain('sub-agents');
    expect(worker).to.contain('Do not delegate');
  });

  it('places the custom system prompt before the role prompt', () => {
    const custom = 'You are terse. Answer in French.';
    const out = systemPromptFor('worker', custom);
    expect(out.startsWith(custom)).to.equal(true);
    expect(out).to.equal(`${custom}\n\n${systemPromptFor('worker')}`);
    expect(out.indexOf(custom)).to.be.below(out.indexOf('worker agent'));
    expect(systemPromptFor('manager', custom).endsWith(systemPromptFor('manager'))).to.equal(true);
  });

  it('uses the role prompt alone without a custom prompt (undefined or empty)', () => {
    expect(systemPromptFor('manager', undefined)).to.equal(systemPromptFor('manager'));
    expect(systemPromptFor('manager', '')).to.equal(systemPromptFor('manager'));
  });
});

describe('engineEnvironment', () => {
  const saved: Record<string, string | undefined> = {};
  const setEnv = (k: string, v: string | undefined): void => {
    if (!(k in saved)) saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  };

  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
      delete saved[k];
    }
  });

  it('sets HOME and CLAUDE_CONFIG_DIR under the workspace and disables nonessential traffic', () => {
    const env = engineEnvironment({ workspace: '/data/agents/default/alpha' });
    expect(env.HOME).to.equal('/data/agents/default/alpha');
    expect(env.SHELL, 'the Bash tool runs bash even where zsh is installed').to.equal('/bin/bash');
    expect(env.CLAUDE_CONFIG_DIR).to.equal('/data/agents/default/alpha/.claude');
    expect(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).to.equal('1');
    expect(env.DISABLE_AUTOUPDATER).to.equal('1');
  });

  it('passes the model key and base URL', () => {
    const env = engineEnvironment({ workspace: '/w', apiKey: 'sk-ant-test-key', baseUrl: 'http://127.0.0.1:9999' });
    expect(env.ANTHROPIC_API_KEY).to.equal('sk-ant-test-key');
    expect(env.ANTHROPIC_BASE_URL).to.equal('http://127.0.0.1:9999');
  });

  it('omits key and base URL when not configured, even if the server has them in its env', () => {
    setEnv('ANTHROPIC_API_KEY', 'sk-ant-server-secret');
    setEnv('ANTHROPIC_BASE_URL', 'http://server-only');
    const env = engineEnvironment({ workspace: '/w' });
    expect(env).to.not.have.property('ANTHROPIC_API_KEY');
    expect(env).to.not.have.property('ANTHROPIC_BASE_URL');
  });

  it('does not pass arbitrary server environment variables through', () => {
    setEnv('SOME_SECRET', 'hunter2');
    setEnv('AWS_SECRET_ACCESS_KEY', 'aws-secret');
    setEnv('AGENTPLANE_ADMIN_TOKEN', 'admin');
    const env = engineEnvironment({ workspace: '/w', apiKey: 'k' });
    expect(env).to.not.have.property('SOME_SECRET');
    expect(env).to.not.have.property('AWS_SECRET_ACCESS_KEY');
    expect(env).to.not.have.property('AGENTPLANE_ADMIN_TOKEN');
    expect(Object.values(env)).to.not.include('hunter2');
    expect(Object.values(env)).to.not.include('aws-secret');
  });

  it('passes only an allow-list of basic variables from the server (PATH, LANG, TZ...)', () => {
    setEnv('PATH', '/usr/bin:/bin');
    setEnv('LANG', 'C.UTF-8');
    setEnv('TZ', 'UTC');
    const env = engineEnvironment({ workspace: '/w' });
    expect(env.PATH).to.equal('/usr/bin:/bin');
    expect(env.LANG).to.equal('C.UTF-8');
    expect(env.TZ).to.equal('UTC');
    const allowed = new Set([
      'PATH',
      'LANG',
      'LC_ALL',
      'TZ',
      'TMPDIR',
      'NODE_EXTRA_CA_CERTS',
      'HOME',
      'SHELL',
      'CLAUDE_CONFIG_DIR',
      'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      'DISABLE_AUTOUPDATER',
      'CLAUDE_CODE_MAX_RETRIES',
      'IS_SANDBOX',
    ]);
    for (const k of Object.keys(env)) expect(allowed.has(k), `unexpected variable ${k}`).to.equal(true);
  });

  it('turns off the engine’s own retries: the model proxy retries and reports them', () => {
    expect(engineEnvironment({ workspace: '/w' }).CLAUDE_CODE_MAX_RETRIES).to.equal('0');
  });

  it('omits allow-listed variables the server does not have', () => {
    setEnv('LC_ALL', undefined);
    setEnv('NODE_EXTRA_CA_CERTS', undefined);
    const env = engineEnvironment({ workspace: '/w' });
    expect(env).to.not.have.property('LC_ALL');
    expect(env).to.not.have.property('NODE_EXTRA_CA_CERTS');
  });

  it('adds extraEnv', () => {
    const env = engineEnvironment({ workspace: '/w', extraEnv: { PATH: '/opt/tools/bin', GIT_AUTHOR_NAME: 'agent' } });
    expect(env.PATH).to.equal('/opt/tools/bin');
    expect(env.GIT_AUTHOR_NAME).to.equal('agent');
  });

  it('marks the workspace as a sandbox only when running as root', () => {
    const env = engineEnvironment({ workspace: '/w' });
    if (process.getuid?.() === 0) expect(env.IS_SANDBOX).to.equal('1');
    else expect(env).to.not.have.property('IS_SANDBOX');
  });

  it('returns only string values', () => {
    const env = engineEnvironment({ workspace: '/w', apiKey: 'k', baseUrl: 'http://x' });
    for (const [k, v] of Object.entries(env)) expect(v, k).to.be.a('string');
  });
});
