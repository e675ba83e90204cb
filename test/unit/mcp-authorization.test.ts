// Each MCP tool is authorized as the REST mirror's request it stands for: the verb, resource,
// subresource, namespace and name the API's own attribute mapping (planFor) gives that request.

import { expect } from 'chai';
import { checksFor } from '../../pkg/server/mcp/server.js';
import { TOOLS } from '../../pkg/server/mcp/tools.js';

const tool = (name: string) => TOOLS.find((t) => t.name === name)!;
const attrs = (name: string, args: Record<string, unknown>) => checksFor(tool(name).request(args)).map((c) => ('resource' in c ? c.resource : c.nonResource));
const r = (verb: string, resource: string, namespace: string, name = '', subresource = '') => ({
  verb,
  group: 'agentplane.io',
  version: 'v1alpha1',
  resource,
  subresource,
  namespace,
  name,
});

describe('MCP tool authorization', () => {
  it('maps every tool onto the verb and resource of its REST request', () => {
    expect(attrs('list_agents', { namespace: 'team-a' })).to.deep.equal([r('list', 'agents', 'team-a')]);
    expect(attrs('list_agents', {})).to.deep.equal([r('list', 'agents', '')]);
    expect(attrs('get_agent', { name: 'a1' })).to.deep.equal([r('get', 'agents', 'default', 'a1')]);
    expect(attrs('create_agent', { name: 'a1', namespace: 'team-a', instructions: 'x' })).to.deep.equal([r('create', 'agents', 'team-a')]);
    expect(attrs('run_task', { name: 'a1', namespace: 'team-a', instructions: 'x' })).to.deep.equal([r('patch', 'agents', 'team-a', 'a1')]);
    expect(attrs('get_events', { name: 'a1', namespace: 'team-a', since: 3 })).to.deep.equal([r('get', 'agents', 'team-a', 'a1', 'events')]);
    expect(attrs('cancel_task', { name: 'a1', namespace: 'team-a' })).to.deep.equal([r('create', 'agents', 'team-a', 'a1', 'cancel')]);
    expect(attrs('list_approvals', { name: 'a1', namespace: 'team-a' })).to.deep.equal([r('get', 'agents', 'team-a', 'a1', 'approvals')]);
    expect(attrs('decide_approval', { name: 'a1', namespace: 'team-a', id: 'toolu_1', decision: 'deny' })).to.deep.equal([
      r('create', 'agents', 'team-a', 'a1', 'approvals'),
    ]);
    expect(attrs('list_squads', { namespace: 'team-a' })).to.deep.equal([r('list', 'squads', 'team-a')]);
  });

  it('keeps a name with path characters in its segment', () => {
    expect(attrs('get_agent', { name: 'a/../../squads', namespace: 'team-a' })).to.deep.equal([r('get', 'agents', 'team-a', 'a/../../squads')]);
  });
});
