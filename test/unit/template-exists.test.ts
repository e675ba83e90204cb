import { expect } from 'chai';

import type { Agent } from '../../pkg/api/agent.js';
import { ApiError } from '../../pkg/api/errors.js';
import type { Attributes } from '../../pkg/registry/admission/admission.js';
import { templateExists } from '../../pkg/registry/admission/template-exists.js';

const agentWith = (templateRef: string): Agent =>
  ({
    apiVersion: 'agentplane.io/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'a1', namespace: 'default' },
    spec: { instructions: 'x', model: 'm', templateRef, role: 'manager', connectors: [], lifecycle: '', task: 1 },
  }) as unknown as Agent;

const attrs = (templateRef: string, old?: string): Attributes => ({
  operation: old === undefined ? 'CREATE' : 'UPDATE',
  kind: 'Agent',
  namespace: 'default',
  name: 'a1',
  object: agentWith(templateRef),
  ...(old !== undefined ? { oldObject: agentWith(old) } : {}),
  dryRun: false,
});

const refusal = async (fn: () => unknown): Promise<ApiError> => {
  try {
    await fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
  return expect.fail('expected a refusal');
};

describe('TemplateExists admission', () => {
  it('accepts "default" with nothing configured, and the configured templates', async () => {
    await templateExists().validate!(attrs('default'));
    const p = templateExists(['gpu-large', 'pool.b']);
    for (const t of ['default', 'gpu-large', 'pool.b']) await p.validate!(attrs(t));
  });

  it('refuses another template as Invalid on spec.templateRef, naming it and the known ones', async () => {
    const err = await refusal(() => templateExists(['gpu-large']).validate!(attrs('gpu-small')));
    expect(err.reason).to.equal('Invalid');
    expect(err.details.causes).to.deep.equal([
      { field: 'spec.templateRef', message: 'template "gpu-small" not found; known templates: "default", "gpu-large"' },
    ]);
    expect(err.message).to.contain('"gpu-small"');
  });

  it('checks an update only when it changes templateRef', async () => {
    const p = templateExists([]);
    // An agent whose template left the configuration keeps working until its templateRef is edited.
    await p.validate!(attrs('retired', 'retired'));
    await refusal(() => p.validate!(attrs('retired', 'default')));
    await p.validate!(attrs('default', 'retired'));
  });

  it('applies to agents and squads, on create and update', () => {
    const p = templateExists();
    expect(p.name).to.equal('TemplateExists');
    expect([...p.kinds].sort()).to.deep.equal(['Agent', 'Squad']);
    expect([...p.operations].sort()).to.deep.equal(['CREATE', 'UPDATE']);
  });

  describe('squads', () => {
    type M = { ref: { name: string } } | { name: string; spec: { instructions: string; templateRef?: string } };
    const squad = (members: M[]) => ({ kind: 'Squad', metadata: { name: 's1', namespace: 'default' }, spec: { members } });
    const sq = (members: M[], old?: M[]): Attributes =>
      ({
        operation: old ? 'UPDATE' : 'CREATE',
        kind: 'Squad',
        namespace: 'default',
        name: 's1',
        object: squad(members),
        ...(old ? { oldObject: squad(old) } : {}),
        dryRun: false,
      }) as unknown as Attributes;

    it('refuses a new embedded member naming an unknown template, naming the member and the template', async () => {
      const err = await refusal(() =>
        templateExists(['gpu']).validate!(
          sq([
            { name: 'm1', spec: { instructions: 'x', templateRef: 'gpu' } },
            { name: 'm2', spec: { instructions: 'x', templateRef: 'tpu' } },
          ]),
        ),
      );
      expect(err.details).to.deep.include({ kind: 'Agent', name: 'm2' });
      expect(err.details.causes).to.deep.equal([{ field: 'templateRef', message: 'template "tpu" not found; known templates: "default", "gpu"' }]);
    });

    it('accepts ref members, embedded members without templateRef or with a known one, and members already in the squad', async () => {
      const p = templateExists(['gpu']);
      await p.validate!(
        sq([{ ref: { name: 'r1' } }, { name: 'm1', spec: { instructions: 'x' } }, { name: 'm2', spec: { instructions: 'x', templateRef: 'gpu' } }]),
      );
      const old: M[] = [{ name: 'm1', spec: { instructions: 'x', templateRef: 'retired' } }];
      await p.validate!(sq([...old, { ref: { name: 'r1' } }], old));
    });
  });
});

describe('TemplateExists with templates that change (the cluster home reads them from ConfigMaps)', () => {
  it('asks for the known names on every check', async () => {
    let names = ['default'];
    const plugin = templateExists(() => names);
    const before = await refusal(() => plugin.validate!(attrs('gpu')));
    expect(before.message).to.contain('template "gpu" not found');
    names = ['default', 'gpu'];
    expect(() => plugin.validate!(attrs('gpu'))).not.to.throw();
  });
});
