// Every exported JSON Schema compiles under ajv's strict mode, so a schema mistake fails here,
// not as a 500 on the first request that reaches it.

import { expect } from 'chai';
import * as agent from '../../pkg/api/agent.js';
import * as squad from '../../pkg/api/squad.js';
import { validateSchema } from '../../pkg/api/validation.js';

const schemas = Object.entries({ ...agent, ...squad }).filter(([name, v]) => name.endsWith('Schema') && typeof v === 'object' && v !== null && 'type' in v);

describe('JSON Schemas', () => {
  it('finds the schemas to check', () => {
    expect(schemas.map(([n]) => n)).to.include.members(['agentTaskRequestSchema', 'squadCreateRequestSchema', 'squadMemberSchema']);
  });
  for (const [name, schema] of schemas) {
    it(`${name} compiles in strict mode`, () => {
      expect(() => validateSchema(schema as object, {})).not.to.throw();
    });
  }
});

describe('squad member shape', () => {
  const causesOf = (m: unknown) => squad.memberShapeCauses(m, 'members[0]', 'team-a');
  it("accepts a ref naming the squad's own namespace and refuses another", () => {
    expect(causesOf({ ref: { name: 'a', namespace: 'team-a' } })).to.deep.equal([]);
    expect(causesOf({ ref: { name: 'a', namespace: 'team-b' } })).to.deep.equal([
      { field: 'members[0].ref.namespace', message: 'must be "team-a": a squad\'s members live in the squad\'s namespace' },
    ]);
  });
  it('accepts a ref and a name with a spec', () => {
    expect(causesOf({ ref: { name: 'a' } })).to.deep.equal([]);
    expect(causesOf({ name: 'a', spec: { instructions: 'x' } })).to.deep.equal([]);
  });
  it('refuses both, and neither', () => {
    expect(causesOf({ ref: { name: 'a' }, name: 'a', spec: { instructions: 'x' } })[0].message).to.contain('not both');
    expect(causesOf({ name: 'a' })[0].message).to.contain('for a new one');
    expect(causesOf({})[0].field).to.equal('members[0]');
  });
  it('parses durations', () => {
    expect(squad.parseDuration('10m')).to.equal(600_000);
    expect(squad.parseDuration('1h30m')).to.equal(5_400_000);
    expect(squad.parseDuration('1.5s')).to.equal(1500);
    expect(squad.parseDuration('250ms')).to.equal(250);
  });
});
