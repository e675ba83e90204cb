import { expect } from 'chai';

import {
  agentPatchRequestSchema,
  agentResponseSchema,
  agentSpecSchema,
  agentTaskRequestSchema,
  LIFECYCLES,
  ROLES,
  toAgentResponse,
  type Agent,
} from '../../pkg/api/agent.js';
import type { Cause } from '../../pkg/api/errors.js';
import { validateSchema } from '../../pkg/api/validation.js';

const fieldsOf = (causes: Cause[]): string[] => causes.map((c) => c.field);
const causeFor = (causes: Cause[], field: string): Cause => {
  const c = causes.find((x) => x.field === field);
  expect(c, `a cause for ${field} in ${JSON.stringify(causes)}`).to.not.equal(undefined);
  return c!;
};

const NAME_HINT = 'lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters';

describe('validateSchema with the agent schemas', () => {
  describe('AgentTaskRequest', () => {
    it('accepts a minimal and a full valid request', () => {
      expect(validateSchema(agentTaskRequestSchema, { name: 'writer', instructions: 'write' })).to.deep.equal([]);
      expect(
        validateSchema(agentTaskRequestSchema, {
          name: 'writer',
          namespace: 'team-1',
          instructions: 'write',
          systemPrompt: '',
          model: 'claude-opus-4',
          templateRef: 'default',
          role: 'worker',
          connectors: ['github', 'slack-bot'],
        }),
      ).to.deep.equal([]);
    });

    it('names a missing required field: instructions "is required"', () => {
      expect(validateSchema(agentTaskRequestSchema, { name: 'writer' })).to.deep.equal([{ field: 'instructions', message: 'is required' }]);
    });

    it('reports every missing required field (allErrors)', () => {
      const causes = validateSchema(agentTaskRequestSchema, {});
      expect(causes).to.deep.include({ field: 'name', message: 'is required' });
      expect(causes).to.deep.include({ field: 'instructions', message: 'is required' });
      expect(causes).to.have.length(2);
    });

    it('names an unknown field: "is not a known field"', () => {
      expect(validateSchema(agentTaskRequestSchema, { name: 'writer', instructions: 'x', colour: 'red' })).to.deep.equal([
        { field: 'colour', message: 'is not a known field' },
      ]);
    });

    it('lists the allowed roles', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 'writer', instructions: 'x', role: 'boss' });
      expect(causes).to.deep.equal([{ field: 'role', message: 'must be one of "manager", "worker"' }]);
    });

    it('explains the name rule in words, not as a pattern', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 'Writer1', instructions: 'x' });
      expect(causes).to.deep.equal([{ field: 'name', message: `must be ${NAME_HINT}` }]);
      expect(causes[0].message).to.not.contain('pattern');
    });

    it('explains an over-long name with the same rule', () => {
      const c = causeFor(validateSchema(agentTaskRequestSchema, { name: 'a'.repeat(64), instructions: 'x' }), 'name');
      expect(c.message).to.equal(`must be ${NAME_HINT}`);
    });

    it('accepts names with digits (DNS-1123 labels: they become pod names)', () => {
      expect(validateSchema(agentTaskRequestSchema, { name: 'agent-1', instructions: 'x' })).to.deep.equal([]);
    });

    it('explains an empty instructions string', () => {
      const c = causeFor(validateSchema(agentTaskRequestSchema, { name: 'a', instructions: '' }), 'instructions');
      expect(c.message).to.equal('must not be empty');
    });

    it('says a missing body is required', () => {
      expect(validateSchema(agentTaskRequestSchema, undefined)).to.deep.equal([{ field: '(body)', message: 'is required: send a JSON object' }]);
    });

    it('explains a bad namespace with the DNS label description', () => {
      const c = causeFor(validateSchema(agentTaskRequestSchema, { name: 'a', instructions: 'x', namespace: 'Team_A' }), 'namespace');
      expect(c.message).to.contain('a DNS label');
    });

    it('rejects duplicate connectors on the connectors field', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 'a', instructions: 'x', connectors: ['github', 'github'] });
      expect(causes).to.have.length(1);
      expect(causes[0].field).to.equal('connectors');
      expect(causes[0].message).to.equal('must not list "github" twice');
    });

    it('formats array element paths as connectors[1]', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 'a', instructions: 'x', connectors: ['ok', 'Not-OK', 'fine'] });
      expect(causes[0].message).to.equal(`must be ${NAME_HINT}`);
      expect(fieldsOf(causes)).to.deep.equal(['connectors[1]']);
      expect(causes[0].message).to.contain(NAME_HINT);
    });

    it('reports wrong types per field', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 7, instructions: 'x', connectors: 'github' });
      expect(causes).to.deep.include({ field: 'name', message: 'must be a string' });
      expect(causes).to.deep.include({ field: 'connectors', message: 'must be an array' });
    });

    it('calls a non-object body "(body)"', () => {
      expect(validateSchema(agentTaskRequestSchema, null)).to.deep.equal([{ field: '(body)', message: 'must be a JSON object' }]);
      expect(validateSchema(agentTaskRequestSchema, ['a'])).to.deep.equal([{ field: '(body)', message: 'must be a JSON object' }]);
    });

    it('does not repeat identical causes', () => {
      const causes = validateSchema(agentTaskRequestSchema, { name: 'a', instructions: 'x', connectors: ['B', 'B'] });
      const keys = causes.map((c) => `${c.field}|${c.message}`);
      expect(new Set(keys).size).to.equal(keys.length);
    });
  });

  describe('templateRef and model', () => {
    const task = (over: Record<string, unknown>) => validateSchema(agentTaskRequestSchema, { name: 'writer', instructions: 'x', ...over });

    it('accepts DNS-1123 template names, with dots', () => {
      for (const t of ['default', 'gpu-large', 'pool.gpu-2', 'a', 'x'.repeat(253)]) expect(task({ templateRef: t }), t).to.deep.equal([]);
    });

    it('refuses a path, upper case, spaces, leading or doubled dots, and over-long names, stating the rule', () => {
      for (const t of ['../../etc/passwd', '/etc/passwd', 'GPU', 'gpu large', '.hidden', 'a..b', 'a.', '-gpu', 'gpu\n', 'x'.repeat(254), '']) {
        const c = causeFor(task({ templateRef: t }), 'templateRef');
        expect(c.message, JSON.stringify(t)).to.match(/^must be a DNS-1123 name \(lowercase letters, digits, hyphens and dots/);
      }
    });

    it('accepts model identifiers of the providers (dots, colons, slashes, @, brackets)', () => {
      for (const m of [
        'claude-sonnet-4-5',
        'anthropic.claude-3-5-sonnet-20241022-v2:0',
        'claude-sonnet-4@20250514',
        'sonnet[1m]',
        'arn:aws:bedrock:us-east-1:1:inference-profile/x',
      ]) {
        expect(task({ model: m }), m).to.deep.equal([]);
      }
    });

    it('refuses a model with whitespace, control or invisible characters, stating the rule', () => {
      for (const m of [
        'claude\nsonnet',
        'claude sonnet',
        ' claude',
        'claude\t',
        'claude\u0000',
        'claude\u007f',
        'claude\u0085',
        'claude\u200b',
        'claude\u202e',
        'claude\u2028',
        'x'.repeat(257),
      ]) {
        for (const causes of [task({ model: m }), validateSchema(agentPatchRequestSchema, { model: m })]) {
          const c = causeFor(causes, 'model');
          expect(c.message, JSON.stringify(m)).to.match(/^must be a model identifier without whitespace or control characters, at most 256 characters/);
        }
      }
    });
  });

  describe('AgentPatchRequest', () => {
    it('rejects an empty patch body {}', () => {
      const causes = validateSchema(agentPatchRequestSchema, {});
      expect(causes).to.have.length(1);
      expect(causes[0].field).to.equal('(body)');
      expect(causes[0].message).to.equal('must set at least one field');
    });

    it('lists the allowed lifecycle values for lifecycle "Nap"', () => {
      const causes = validateSchema(agentPatchRequestSchema, { lifecycle: 'Nap' });
      expect(causes).to.deep.equal([{ field: 'lifecycle', message: 'must be one of "", "Sleep", "Wake", "AutoDelete"' }]);
      for (const l of LIFECYCLES) expect(causes[0].message).to.contain(JSON.stringify(l));
    });

    it('accepts each lifecycle, including "" (always on), and a connectors-only patch', () => {
      for (const l of LIFECYCLES) expect(validateSchema(agentPatchRequestSchema, { lifecycle: l })).to.deep.equal([]);
      expect(validateSchema(agentPatchRequestSchema, { connectors: [] })).to.deep.equal([]);
    });

    it('accepts instructions, model and systemPrompt, but not the other fields of the task request', () => {
      expect(validateSchema(agentPatchRequestSchema, { instructions: 'x', model: 'm', systemPrompt: '' })).to.deep.equal([]);
      expect(validateSchema(agentPatchRequestSchema, { role: 'worker' })).to.deep.equal([{ field: 'role', message: 'is not a known field' }]);
      expect(validateSchema(agentPatchRequestSchema, { instructions: '' }).map((c) => c.field)).to.deep.equal(['instructions']);
    });
  });

  describe('AgentSpec with a root', () => {
    const spec = {
      instructions: 'x',
      model: 'm',
      templateRef: 'default',
      role: 'manager',
      connectors: [],
      lifecycle: '',
      task: 0,
    };

    it('accepts a complete spec', () => {
      expect(validateSchema(agentSpecSchema, spec, 'spec')).to.deep.equal([]);
    });

    it('prefixes fields with the root, including nested array paths', () => {
      const causes = validateSchema(agentSpecSchema, { ...spec, connectors: ['a', 'b', 'C'], task: -1, extra: 1 }, 'spec');
      expect(fieldsOf(causes)).to.have.members(['spec.connectors[2]', 'spec.task', 'spec.extra']);
      expect(causeFor(causes, 'spec.extra').message).to.equal('is not a known field');
      expect(causeFor(causes, 'spec.task').message).to.equal('must be at least 0');
    });

    it('names required fields under the root', () => {
      const { model: _m, ...rest } = spec;
      expect(validateSchema(agentSpecSchema, rest, 'spec')).to.deep.equal([{ field: 'spec.model', message: 'is required' }]);
    });

    it('rejects a non-integer task', () => {
      expect(fieldsOf(validateSchema(agentSpecSchema, { ...spec, task: 1.5 }, 'spec'))).to.deep.equal(['spec.task']);
    });
  });

  describe('schema constants', () => {
    it('roles and lifecycles in the schemas match the exported lists', () => {
      expect([...agentTaskRequestSchema.properties.role.enum]).to.deep.equal([...ROLES]);
      expect([...agentPatchRequestSchema.properties.lifecycle.enum]).to.deep.equal([...LIFECYCLES]);
    });

    it('toAgentResponse produces an object valid against AgentResponse', () => {
      const agent: Agent = {
        apiVersion: 'agentplane.io/v1alpha1',
        kind: 'Agent',
        metadata: {
          name: 'writer',
          namespace: 'default',
          uid: 'u',
          resourceVersion: '3',
          generation: 1,
          creationTimestamp: '2024-05-06T07:08:09.000Z',
        },
        spec: { instructions: 'x', model: 'm', templateRef: 'default', role: 'worker', connectors: ['github'], lifecycle: 'Sleep', task: 1 },
        status: { status: 'Running', taskStatus: 'InProgress', lastTaskMessage: 'hi', observedTask: 1 },
      };
      const res = toAgentResponse(agent);
      expect(validateSchema(agentResponseSchema, res)).to.deep.equal([]);
      expect(res).to.deep.equal({
        name: 'writer',
        namespace: 'default',
        model: 'm',
        status: 'Running',
        taskStatus: 'InProgress',
        lastTaskMessage: 'hi',
        createdAt: '2024-05-06T07:08:09.000Z',
        role: 'worker',
        templateRef: 'default',
        connectors: ['github'],
        lifecycle: 'Sleep',
        priority: 0,
      });
      expect(fieldsOf(validateSchema(agentResponseSchema, { ...res, createdAt: 'yesterday' }))).to.deep.equal(['createdAt']);
    });
  });
});
