// The agent's templateRef and model as an attacker sends them, through both APIs: a template is a
// DNS-1123 name of a known template ("default" or one the server is configured with: the
// TemplateExists admission plugin), a model has no whitespace or control characters (the agent
// schemas). Refusals name the field and state the rule; nothing is stored. Also the serve config
// file and flag that list the templates.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { eventually, type Harness, type Reply, startHarness } from '../support/harness.js';

const GV = 'agentplane.io/v1alpha1';
const NS = `/apis/${GV}/namespaces/default`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TEMPLATE_RULE = /^must be a DNS-1123 name \(lowercase letters, digits, hyphens and dots/;
const MODEL_RULE = /^must be a model identifier without whitespace or control characters, at most 256 characters/;
const KNOWN = 'known templates: "default", "gpu-large", "pool.b"';

const kubeAgent = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: GV,
  kind: 'Agent',
  metadata: { name },
  spec: { instructions: '@say hi', ...spec },
});

/** The REST rendering of a refusal: 400 Invalid, its causes. */
function restInvalid(r: Reply<any>, what: string): { field: string; message: string }[] {
  expect(r.status, `${what}: ${r.text}`).to.equal(400);
  expect(r.body.reason, what).to.equal('Invalid');
  return r.body.details.causes;
}

/** The aggregated rendering: 422 metav1.Status Invalid, its causes. */
function kubeInvalid(r: Reply<any>, what: string): { field: string; message: string }[] {
  expect(r.status, `${what}: ${r.text}`).to.equal(422);
  expect(r.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
  return r.body.details.causes;
}

describe('agent templateRef and model (integration)', function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ templates: ['gpu-large', 'pool.b'] });
  });
  after(async () => {
    await h?.close();
  });

  const restGet = (name: string) => h.api('GET', `/api/v1/agents/${name}`);

  describe('REST mirror', () => {
    it('refuses templateRef "../../etc/passwd" with 400 naming templateRef and stating the rule; nothing is created', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'trav', instructions: '@say hi', templateRef: '../../etc/passwd' });
      const causes = restInvalid(r, 'path traversal');
      expect(causes.map((c) => c.field)).to.deep.equal(['templateRef']);
      expect(causes[0].message).to.match(TEMPLATE_RULE);
      expect(r.body.error).to.contain('templateRef: must be a DNS-1123 name');
      expect((await restGet('trav')).status).to.equal(404);
    });

    it('refuses a template that does not exist, naming it and the known ones', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'nosuch', instructions: '@say hi', templateRef: 'gpu-small' });
      const causes = restInvalid(r, 'unknown template');
      expect(causes).to.deep.equal([{ field: 'templateRef', message: `template "gpu-small" not found; ${KNOWN}` }]);
      expect(r.body.error).to.contain('"gpu-small"');
      expect((await restGet('nosuch')).status).to.equal(404);
    });

    it('refuses a model containing a newline (POST and PATCH) with a readable message; the model is unchanged', async () => {
      const r = await h.api('POST', '/api/v1/agents', { name: 'nl-model', instructions: '@say hi', model: 'claude-sonnet-4-5\nX-Injected: 1' });
      const causes = restInvalid(r, 'newline in model');
      expect(causes.map((c) => c.field)).to.deep.equal(['model']);
      expect(causes[0].message).to.match(MODEL_RULE);
      expect((await restGet('nl-model')).status).to.equal(404);

      const ok = await h.api('POST', '/api/v1/agents', { name: 'nl-model', instructions: '@say hi' });
      expect(ok.status, ok.text).to.equal(201);
      for (const model of ['claude\nsonnet', 'claude sonnet', 'claude\u0000', 'claude\u202e']) {
        const p = await h.api('PATCH', '/api/v1/agents/nl-model', { model });
        expect(restInvalid(p, JSON.stringify(model)).map((c) => c.field)).to.deep.equal(['model']);
      }
      expect((await restGet('nl-model')).body.model).to.equal('claude-sonnet-4-5');
    });

    it('accepts the default template (omitted or named) and a configured one, and provider model ids', async () => {
      const omitted = await h.api('POST', '/api/v1/agents', { name: 'tpl-omitted', instructions: '@say hi' });
      expect(omitted.status, omitted.text).to.equal(201);
      expect(omitted.body.templateRef).to.equal('default');
      const named = await h.api('POST', '/api/v1/agents', { name: 'tpl-default', instructions: '@say hi', templateRef: 'default' });
      expect(named.status, named.text).to.equal(201);
      const gpu = await h.api('POST', '/api/v1/agents', {
        name: 'tpl-gpu',
        instructions: '@say hi',
        templateRef: 'gpu-large',
        model: 'anthropic.claude-3-5-sonnet-20241022-v2:0',
      });
      expect(gpu.status, gpu.text).to.equal(201);
      expect(gpu.body).to.include({ templateRef: 'gpu-large', model: 'anthropic.claude-3-5-sonnet-20241022-v2:0' });
      const dotted = await h.api('POST', '/api/v1/agents', { name: 'tpl-dotted', instructions: '@say hi', templateRef: 'pool.b' });
      expect(dotted.status, dotted.text).to.equal(201);
    });
  });

  describe('aggregated API', () => {
    it('refuses templateRef "../../etc/passwd" with 422 on spec.templateRef', async () => {
      const r = await h.api('POST', `${NS}/agents`, kubeAgent('k-trav', { templateRef: '../../etc/passwd' }));
      const causes = kubeInvalid(r, 'path traversal');
      expect(causes.map((c) => c.field)).to.deep.equal(['spec.templateRef']);
      expect(causes[0].message).to.match(TEMPLATE_RULE);
      expect(r.body.message).to.match(/^Agent\.agentplane\.io "k-trav" is invalid: spec\.templateRef: must be a DNS-1123 name/);
      expect((await h.api('GET', `${NS}/agents/k-trav`)).status).to.equal(404);
    });

    it('refuses an unknown template with 422 on spec.templateRef, naming it; also when patched in', async () => {
      const r = await h.api('POST', `${NS}/agents`, kubeAgent('k-nosuch', { templateRef: 'gpu-small' }));
      expect(kubeInvalid(r, 'unknown template')).to.deep.equal([
        { field: 'spec.templateRef', message: `template "gpu-small" not found; ${KNOWN}`, reason: 'FieldValueInvalid' },
      ]);
      expect((await h.api('GET', `${NS}/agents/k-nosuch`)).status).to.equal(404);

      const ok = await h.api('POST', `${NS}/agents`, kubeAgent('k-tpl', { templateRef: 'gpu-large' }));
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.spec.templateRef).to.equal('gpu-large');
      const p = await h.api('PATCH', `${NS}/agents/k-tpl`, { spec: { templateRef: 'gpu-small' } }, MERGE);
      expect(kubeInvalid(p, 'patch to unknown template').map((c) => c.field)).to.deep.equal(['spec.templateRef']);
      const back = await h.api('PATCH', `${NS}/agents/k-tpl`, { spec: { templateRef: 'default' } }, MERGE);
      expect(back.status, back.text).to.equal(200);
      expect(back.body.spec.templateRef).to.equal('default');
    });

    it('refuses a model containing a newline with 422 on spec.model (create and merge patch)', async () => {
      const r = await h.api('POST', `${NS}/agents`, kubeAgent('k-model', { model: 'claude\nsonnet' }));
      const causes = kubeInvalid(r, 'newline in model');
      expect(causes.map((c) => c.field)).to.deep.equal(['spec.model']);
      expect(causes[0].message).to.match(MODEL_RULE);

      const ok = await h.api('POST', `${NS}/agents`, kubeAgent('k-model', {}));
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.spec).to.include({ model: 'claude-sonnet-4-5', templateRef: 'default' });
      const p = await h.api('PATCH', `${NS}/agents/k-model`, { spec: { model: 'claude\r\nsonnet' } }, MERGE);
      expect(kubeInvalid(p, 'patch newline model').map((c) => c.field)).to.deep.equal(['spec.model']);
      expect((await h.api('GET', `${NS}/agents/k-model`)).body.spec.model).to.equal('claude-sonnet-4-5');
    });
  });

  describe('squads embed agents under the same rules', () => {
    it('a squad whose new member names an unknown template, or a bad model, is refused naming it, creating nothing', async () => {
      for (const [spec, text] of [
        [{ instructions: '@say b', templateRef: 'nope' }, 'template \\"nope\\" not found'],
        [{ instructions: '@say b', templateRef: '../../etc/passwd' }, 'templateRef: must be a DNS-1123 name'],
        [{ instructions: '@say b', model: 'claude\nsonnet' }, 'model: must be a model identifier'],
      ] as const) {
        const r = await h.api('POST', '/api/v1/squads', {
          name: 'tpl-squad',
          members: [
            { name: 'sq-a', spec: { instructions: '@say a' } },
            { name: 'sq-b', spec },
          ],
        });
        expect(r.status, r.text).to.equal(400);
        expect(r.text).to.contain(text);
        expect((await h.api('GET', '/api/v1/squads/tpl-squad')).status).to.equal(404);
        expect((await restGet('sq-b')).status).to.equal(404);
      }
      const k = await h.api('POST', `${NS}/squads`, {
        apiVersion: GV,
        kind: 'Squad',
        metadata: { name: 'k-tpl-squad' },
        spec: {
          members: [
            { name: 'ksq-a', spec: { instructions: '@say a' } },
            { name: 'ksq-b', spec: { instructions: '@say b', templateRef: 'nope' } },
          ],
        },
      });
      expect(k.status, k.text).to.equal(422);
      expect(k.text).to.contain('template \\"nope\\" not found');
      // A configured template is fine in a squad too.
      const ok = await h.api('POST', '/api/v1/squads', {
        name: 'tpl-squad',
        members: [
          { name: 'sq-a', spec: { instructions: '@say a' } },
          { name: 'sq-b', spec: { instructions: '@say b', templateRef: 'gpu-large' } },
        ],
      });
      expect(ok.status, ok.text).to.equal(201);
    });
  });
});

describe('agentplane serve: the known templates (integration)', function () {
  this.timeout(60_000);
  const main = fileURLToPath(new URL('../../cmd/agentplane/main.js', import.meta.url));
  const dirs: string[] = [];
  const tmp = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reads "templates" from the config file', async () => {
    const config = join(tmp('agentplane-cfg-'), 'config.json');
    writeFileSync(config, JSON.stringify({ templates: ['from-config'] }));
    const child = spawn(process.execPath, [main, 'serve', '--port', '0', '--data-dir', tmp('agentplane-tpl-'), '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    const lines: string[] = [];
    const collect = (chunk: Buffer): void => void lines.push(...String(chunk).split('\n').filter(Boolean));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    try {
      const url = await eventually(
        async () => {
          for (const l of lines) {
            if (!l.includes('agentplane is serving')) continue;
            const m = /"url":"([^"]+)"/.exec(l);
            if (m) return m[1];
          }
          return undefined;
        },
        30_000,
        'server up',
      );
      // dryRun is not on the REST mirror; the aggregated API checks without creating.
      const post = async (templateRef: string) => {
        const res = await fetch(`${url}${NS}/agents?dryRun=All`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(kubeAgent('probe', { templateRef })),
        });
        return { status: res.status, text: await res.text() };
      };
      expect((await post('from-config')).status).to.equal(201);
      expect((await post('default')).status).to.equal(201);
      const other = await post('not-configured');
      expect(other.status).to.equal(422);
      expect(other.text).to.contain('template \\"not-configured\\" not found; known templates: \\"default\\", \\"from-config\\"');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('refuses to start with a template that is not a DNS-1123 name (flag) or a config value that is not a list', () => {
    const viaFlag = spawnSync(process.execPath, [main, 'serve', '--port', '0', '--data-dir', tmp('agentplane-tpl-'), '--templates', 'ok,../bad'], {
      encoding: 'utf8',
    });
    expect(viaFlag.status).to.equal(2);
    expect(viaFlag.stderr).to.contain('template "../bad": must be a DNS-1123 name');

    const config = join(tmp('agentplane-cfg-'), 'config.json');
    writeFileSync(config, JSON.stringify({ templates: 'gpu' }));
    const viaConfig = spawnSync(process.execPath, [main, 'serve', '--config', config], { encoding: 'utf8' });
    expect(viaConfig.status).to.equal(2);
    expect(viaConfig.stderr).to.contain('"templates" must be an array of names or {"name", "modelTaskDeadlineSeconds", "egress", "egressAllow"} objects');

    writeFileSync(config, JSON.stringify({ templates: [{ name: 'quick', modelTaskDeadlineSeconds: 0 }] }));
    const badDeadline = spawnSync(process.execPath, [main, 'serve', '--config', config], { encoding: 'utf8' });
    expect(badDeadline.status).to.equal(2);
    expect(badDeadline.stderr).to.contain('"templates": template "quick": modelTaskDeadlineSeconds must be a positive number of seconds, got 0');

    writeFileSync(config, JSON.stringify({ templates: [{ name: 'quick', deadline: 5 }] }));
    const unknownField = spawnSync(process.execPath, [main, 'serve', '--config', config], { encoding: 'utf8' });
    expect(unknownField.status).to.equal(2);
    expect(unknownField.stderr).to.contain('template "quick": unknown field(s) deadline; known: name, modelTaskDeadlineSeconds, egress, egressAllow');

    // Egress (docs/security.md "Agent egress"): each field checked, naming the template and field.
    for (const [t, message] of [
      [{ name: 'net', egress: 'closed' }, 'template "net": egress must be one of Open, Proxy, None, got "closed"'],
      [
        { name: 'net', egress: 'Proxy', egressAllow: ['ok.example', 'https://x.example/'] },
        'template "net": egressAllow [1] must be a host name (api.example.com) or *.suffix (*.example.com), got "https://x.example/"',
      ],
      [{ name: 'net', egress: 'None', egressAllow: ['a.example'] }, 'template "net": egressAllow applies only with egress: Proxy (egress is None)'],
    ] as const) {
      writeFileSync(config, JSON.stringify({ templates: [t] }));
      const bad = spawnSync(process.execPath, [main, 'serve', '--config', config], { encoding: 'utf8' });
      expect(bad.status, JSON.stringify(t)).to.equal(2);
      expect(bad.stderr).to.contain(`"templates": ${message}`);
    }
  });
});
