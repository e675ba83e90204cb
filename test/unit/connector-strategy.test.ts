import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import {
  CONNECTOR_KIND,
  type Connector,
  connectorCreateRequestSchema,
  connectorRuleCauses,
  type ConnectorSpec,
  toConnectorResponse,
} from '../../pkg/api/connector.js';
import { ApiError, type Cause } from '../../pkg/api/errors.js';
import { API_VERSION } from '../../pkg/api/meta.js';
import { validateSchema } from '../../pkg/api/validation.js';
import { connectorStrategy } from '../../pkg/registry/connector/strategy.js';
import { Registry } from '../../pkg/registry/registry.js';
import { SqliteState } from '../../pkg/registry/sqlite/sqlite-state.js';

const fields = (causes: Cause[]): string[] => causes.map((c) => c.field);
const request = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'github',
  url: 'https://mcp.example.com/mcp',
  ...extra,
});
/** Schema plus cross-field rules, as the service applies them to a request body. */
const check = (body: Record<string, unknown>): Cause[] => {
  const causes = validateSchema(connectorCreateRequestSchema, body);
  return causes.length ? causes : connectorRuleCauses(body);
};

function draft(name: string, spec: Partial<ConnectorSpec> = {}, namespace = 'default'): Connector {
  return {
    apiVersion: '',
    kind: '',
    metadata: { name, namespace, uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
    spec: { url: 'http://127.0.0.1:9/mcp', ...spec } as ConnectorSpec,
    status: undefined as unknown as Connector['status'],
  };
}

describe('Connector validation', () => {
  it('accepts a minimal request and a full one', () => {
    expect(check(request())).to.deep.equal([]);
    expect(
      check(
        request({
          namespace: 'team-1',
          service: 'github',
          displayName: 'GitHub',
          url: 'http://127.0.0.1:8080/mcp?x=1',
          authSecretName: 'github-token',
          authSecretKey: 'token',
          authType: 'header',
          headerName: 'X-Api-Key',
        }),
      ),
    ).to.deep.equal([]);
  });

  it('requires name and url', () => {
    expect(fields(check({}))).to.have.members(['name', 'url']);
  });

  it('refuses a URL that is not http(s), naming url', () => {
    for (const url of ['ftp://example.com/mcp', 'example.com/mcp', 'not a url', 'file:///etc/passwd', '']) {
      const causes = check(request({ url }));
      expect(causes.length, url).to.be.greaterThan(0);
      expect(new Set(fields(causes)), url).to.deep.equal(new Set(['url']));
    }
  });

  it('refuses credentials in the URL', () => {
    const causes = check(request({ url: 'https://user:pass@mcp.example.com/mcp' }));
    expect(causes).to.have.length(1);
    expect(causes[0].field).to.equal('url');
    expect(causes[0].message).to.contain('credentials');
  });

  it('refuses bad names with the agent name rule', () => {
    for (const name of ['GitHub', '-git', 'git-', 'a'.repeat(64), 'git_hub']) {
      expect(fields(check(request({ name }))), name).to.deep.equal(['name']);
    }
  });

  it('wants the secret reference both-or-neither', () => {
    expect(check(request({ authSecretName: 'tok' }))).to.deep.equal([{ field: 'authSecretKey', message: 'is required when authSecretName is set' }]);
    expect(check(request({ authSecretKey: 'tok' }))).to.deep.equal([{ field: 'authSecretName', message: 'is required when authSecretKey is set' }]);
    expect(fields(check(request({ authSecretName: 'tok', authSecretKey: 'bad key' })))).to.deep.equal(['authSecretKey']);
  });

  it('wants headerName with authType header, and only then', () => {
    const secret = { authSecretName: 'tok', authSecretKey: 'token' };
    expect(check(request({ ...secret, authType: 'header' }))).to.deep.equal([{ field: 'headerName', message: 'is required when authType is "header"' }]);
    expect(fields(check(request({ ...secret, headerName: 'X-Key' })))).to.deep.equal(['headerName']);
    expect(fields(check(request({ ...secret, authType: 'header', headerName: 'X Key' })))).to.deep.equal(['headerName']);
    expect(fields(check(request({ ...secret, authType: 'header', headerName: 'Content-Type' })))).to.deep.equal(['headerName']);
    expect(fields(check(request({ ...secret, authType: 'basic' })))).to.deep.equal(['authType']);
    expect(fields(check(request({ authType: 'header', headerName: 'X-Key' })))).to.deep.equal(['authSecretName']);
  });

  it('refuses unknown fields', () => {
    expect(check(request({ token: 'x' }))).to.deep.equal([{ field: 'token', message: 'is not a known field' }]);
  });
});

describe('Connector registry (Registry + connectorStrategy on SqliteState)', () => {
  let dir: string;
  let state: SqliteState;
  let connectors: Registry<Connector>;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentplane-conn-'));
    state = new SqliteState(path.join(dir, 'state.db'));
    connectors = new Registry<Connector>(state.store<Connector>(CONNECTOR_KIND), connectorStrategy);
  });
  afterEach(() => {
    state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('defaults authType, displayName and service, and starts Unknown', async () => {
    const c = await connectors.create(draft('echo'));
    expect(c.apiVersion).to.equal(API_VERSION);
    expect(c.kind).to.equal(CONNECTOR_KIND);
    expect(c.spec).to.deep.equal({ url: 'http://127.0.0.1:9/mcp', authType: 'bearer', displayName: 'echo', service: '' });
    expect(c.status.phase).to.equal('Unknown');
    expect(c.metadata.generation).to.equal(1);
  });

  it('validates on create with spec-prefixed fields', async () => {
    let err: unknown;
    try {
      await connectors.create(draft('echo', { url: 'gopher://x', authSecretName: 'tok' }));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    const causes = (err as ApiError).details.causes!;
    expect(fields(causes)).to.include.members(['spec.url', 'spec.authSecretKey']);
    expect((err as ApiError).code).to.equal(400);
  });

  it('refuses a duplicate name with 409 AlreadyExists, but allows it in another namespace', async () => {
    await connectors.create(draft('echo'));
    let err: ApiError | undefined;
    try {
      await connectors.create(draft('echo'));
    } catch (e) {
      err = e as ApiError;
    }
    expect(err?.reason).to.equal('AlreadyExists');
    expect(err?.code).to.equal(409);
    await connectors.create(draft('echo', {}, 'other'));
  });

  it('keeps status on spec updates, but resets it when the address or credential changes', async () => {
    await connectors.create(draft('echo'));
    await connectors.updateStatus('default', 'echo', (s) => {
      s.phase = 'Ready';
      s.message = '1 tool';
      s.toolCount = 1;
    });
    const renamed = await connectors.update('default', 'echo', (c) => {
      c.spec.displayName = 'Echo';
    });
    expect(renamed.status.phase).to.equal('Ready');
    expect(renamed.metadata.generation).to.equal(2);
    const moved = await connectors.update('default', 'echo', (c) => {
      c.spec.url = 'http://127.0.0.1:10/mcp';
    });
    expect(moved.status.phase).to.equal('Unknown');
  });

  it('deletes at once (not finalized)', async () => {
    await connectors.create(draft('echo'));
    await connectors.delete('default', 'echo');
    expect(await connectors.get('default', 'echo')).to.equal(undefined);
  });

  it('renders the REST shape with agent counts and without a secret value', async () => {
    const c = await connectors.create(draft('echo', { authSecretName: 'tok', authSecretKey: 'token', service: 'echo' }));
    const r = toConnectorResponse(c, ['alpha', 'beta']);
    expect(r).to.deep.include({
      name: 'echo',
      namespace: 'default',
      service: 'echo',
      displayName: 'echo',
      url: 'http://127.0.0.1:9/mcp',
      authSecretName: 'tok',
      authSecretKey: 'token',
      authType: 'bearer',
      attachedAgents: 2,
      agentNames: ['alpha', 'beta'],
      createdAt: c.metadata.creationTimestamp,
    });
    expect(r).to.not.have.property('headerName');
    expect(toConnectorResponse(await connectors.create(draft('bare')), []).authSecretName).to.equal('');
  });
});

describe('OpenAPI: connectors and secrets', () => {
  it('documents every connector and secret operation from the validation schemas', async () => {
    const { buildOpenApi } = await import('../../pkg/api/openapi.js');
    const { secretCreateRequestSchema } = await import('../../pkg/api/secret.js');
    const doc = buildOpenApi();
    const ops = Object.entries(doc.paths).flatMap(([p, item]) =>
      (['get', 'post', 'put', 'delete'] as const).filter((m) => item?.[m]).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops).to.include.members([
      'GET /api/v1/connectors',
      'POST /api/v1/connectors',
      'GET /api/v1/connectors/{name}',
      'DELETE /api/v1/connectors/{name}',
      'GET /api/v1/connectors/{name}/tools',
      'GET /api/v1/secrets',
      'POST /api/v1/secrets',
      'GET /api/v1/secrets/{name}',
      'PUT /api/v1/secrets/{name}',
      'DELETE /api/v1/secrets/{name}',
    ]);
    const strip = (s: object): object => {
      const { $id: _id, ...rest } = s as { $id?: string };
      return JSON.parse(JSON.stringify(rest)) as object;
    };
    expect(doc.components!.schemas!.ConnectorCreateRequest).to.deep.equal(strip(connectorCreateRequestSchema));
    expect(doc.components!.schemas!.SecretCreateRequest).to.deep.equal(strip(secretCreateRequestSchema));
    // The secret response schema has no place for values (bindings are not secret).
    expect(Object.keys((doc.components!.schemas!.SecretResponse as { properties: object }).properties)).to.deep.equal([
      'name',
      'namespace',
      'keys',
      'allowedUrls',
      'createdAt',
    ]);
  });
});
