// The audit policy's matching, as kube-apiserver's policy checker: subresource wildcards,
// resource names, non-resource URL prefixes, groups, omitStages, and the default level.

import { expect } from 'chai';

import type { RequestAttributes } from '../../pkg/server/auth/attributes.js';
import { decide, parseAuditPolicy, writesAnything } from '../../pkg/server/audit/index.js';

const res = (verb: string, resource: string, subresource = '', name = 'a1', namespace = 'team-a', group = 'agentplane.io'): RequestAttributes => ({
  resource: { verb, group, version: 'v1alpha1', resource, subresource, namespace, name },
});
const alice = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const policy = (rules: string, defaultLevel: 'None' | 'Metadata' | 'Request' = 'Metadata') =>
  parseAuditPolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n${rules}`, defaultLevel);

describe('audit policy', () => {
  it('matches resource/*, */subresource and resource names as kube does', () => {
    const p = policy(
      [
        '  - level: None',
        '    resources: [{group: agentplane.io, resources: ["*/cancel"]}]',
        '  - level: Request',
        '    resources: [{group: agentplane.io, resources: ["squads/*"], resourceNames: [s1]}]',
      ].join('\n'),
    );
    expect(decide(p, res('create', 'agents', 'cancel'), alice).level).to.equal('None');
    expect(decide(p, res('create', 'agents'), alice).level).to.equal('Metadata');
    expect(decide(p, res('patch', 'squads', '', 's1'), alice).level).to.equal('Request');
    expect(decide(p, res('create', 'squads', 'breakup', 's1'), alice).level).to.equal('Request');
    expect(decide(p, res('patch', 'squads', '', 's2'), alice).level).to.equal('Metadata');
    // Another group of the same resource name does not match.
    expect(decide(p, res('patch', 'squads', '', 's1', 'team-a', 'other.io'), alice).level).to.equal('Metadata');
  });

  it('matches user groups, and non-resource URLs by exact path or prefix, never resources', () => {
    const p = policy(
      ['  - level: Request', '    nonResourceURLs: ["/hooks/*"]', '  - level: None', '    userGroups: [devs]', '    nonResourceURLs: [/other]'].join('\n'),
      'Metadata',
    );
    expect(decide(p, { nonResource: { verb: 'post', path: '/hooks/x' } }, alice).level).to.equal('Request');
    expect(decide(p, { nonResource: { verb: 'post', path: '/other' } }, alice).level).to.equal('None');
    expect(decide(p, { nonResource: { verb: 'post', path: '/other' } }, { username: 'bob', groups: [] }).level).to.equal('Metadata');
    expect(decide(p, res('create', 'agents'), alice).level).to.equal('Metadata');
  });

  it('omitStages ResponseComplete writes nothing; omitManagedFields is passed on', () => {
    const p = policy('  - level: Metadata\n    users: [bob]\n    omitStages: [ResponseComplete]\n  - level: Request\n    omitManagedFields: true\n');
    expect(decide(p, res('create', 'agents'), alice)).to.deep.equal({ level: 'Request', omitManagedFields: true });
    expect(decide(p, res('create', 'agents'), { username: 'bob', groups: [] }).level).to.equal('None');
    expect(writesAnything(policy('  - level: None\n', 'None'))).to.equal(false);
    expect(writesAnything(policy('  - level: Metadata\n    users: [x]\n', 'None'))).to.equal(true);
  });

  it('refuses what it cannot honour, naming the place', () => {
    expect(() => policy('  - level: Request\n    nonResourceURLs: [/x]\n    namespaces: [a]\n')).to.throw(
      'rules[0]: a rule with nonResourceURLs cannot also name resources or namespaces',
    );
    expect(() => policy('  - level: Request\n    resources: [{group: "", resources: [a/b/c]}]\n')).to.throw(
      'rules[0].resources[0].resources[0]: must be "resource" or "resource/subresource"',
    );
    expect(() => policy('  - level: Request\n    resources: [{group: "", resource: [secrets]}]\n')).to.throw('rules[0].resources[0]: unknown field "resource"');
    expect(() => policy('  - level: Request\n    users: alice\n')).to.throw('rules[0].users: must be a list');
    expect(() => policy('  - {}\n')).to.throw('rules[0].level: must be one of');
    expect(() => parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\n', 'Metadata')).to.throw('"rules" must be a list');
  });
});
