// Pieces of the aggregated API that need no server: selectors, Accept negotiation, ages as
// kubectl prints them, metav1.Status rendering, and the agent strategy's update rule.

import { expect } from 'chai';
import type { Agent } from '../../pkg/api/agent.js';
import { ApiError, conflict, expired, invalid, notFound, toStatus } from '../../pkg/api/errors.js';
import { agentStrategy } from '../../pkg/registry/agent/strategy.js';
import { humanDuration } from '../../pkg/registry/table.js';
import { negotiate } from '../../pkg/server/aggregated/negotiation.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../pkg/server/aggregated/selectors.js';

describe('aggregated API pieces', () => {
  describe('label selectors', () => {
    const labels = { app: 'web', tier: 'front', 'example.com/owner': 'team-a' };
    const m = (s: string, l: Record<string, string> | undefined = labels): boolean => matchesLabels(parseLabelSelector(s), l);

    it('parses and matches every operator', () => {
      expect(m('')).to.equal(true);
      expect(m('app=web')).to.equal(true);
      expect(m('app==web,tier=front')).to.equal(true);
      expect(m('app=api')).to.equal(false);
      expect(m('app!=api')).to.equal(true);
      expect(m('missing!=x')).to.equal(true);
      expect(m('app in (api, web)')).to.equal(true);
      expect(m('app notin (web)')).to.equal(false);
      expect(m('missing notin (web)')).to.equal(true);
      expect(m('tier')).to.equal(true);
      expect(m('!tier')).to.equal(false);
      expect(m('!missing')).to.equal(true);
      expect(m('example.com/owner=team-a')).to.equal(true);
      expect(m('app=', { app: '' })).to.equal(true);
      expect(m('n>2', { n: '3' })).to.equal(true);
      expect(m('n<2', { n: '3' })).to.equal(false);
      expect(m('app', {})).to.equal(false);
      expect(matchesLabels(parseLabelSelector('app'), undefined)).to.equal(false);
    });

    it('refuses bad syntax and invalid keys or values with 400', () => {
      for (const bad of ['app in (web', 'app in ()', '=web', 'app=web,', 'bad key=x', 'app=-x-', 'a/b/c=x', 'n>x']) {
        expect(() => parseLabelSelector(bad), bad)
          .to.throw(ApiError)
          .with.property('code', 400);
      }
    });
  });

  describe('field selectors', () => {
    it('parses =, == and != with escapes', () => {
      expect(parseFieldSelector('metadata.name=a,spec.x!=b,status.y==c')).to.deep.equal([
        { field: 'metadata.name', op: 'eq', value: 'a' },
        { field: 'spec.x', op: 'neq', value: 'b' },
        { field: 'status.y', op: 'eq', value: 'c' },
      ]);
      expect(parseFieldSelector('metadata.name=a\\,b')).to.deep.equal([{ field: 'metadata.name', op: 'eq', value: 'a,b' }]);
      expect(() => parseFieldSelector('nonsense')).to.throw(ApiError);
    });

    it('matches, and names the supported fields for an unknown one', () => {
      const fields = { 'metadata.name': 'a', 'status.phase': 'Ready' };
      expect(matchesFields(parseFieldSelector('status.phase=Ready'), fields, 'connectors')).to.equal(true);
      expect(matchesFields(parseFieldSelector('status.phase!=Ready'), fields, 'connectors')).to.equal(false);
      expect(() => matchesFields(parseFieldSelector('spec.nope=1'), fields, 'connectors')).to.throw(/field label not supported: spec.nope/);
    });
  });

  describe('Accept negotiation', () => {
    const kinds = ['Table', 'PartialObjectMetadata'] as const;
    it('serves JSON by default, a Table or partial metadata when asked, and 406 when JSON is not acceptable', () => {
      expect(negotiate(undefined, kinds)).to.deep.equal({ as: 'object' });
      expect(negotiate('*/*', kinds)).to.deep.equal({ as: 'object' });
      expect(negotiate('application/json;as=Table;v=v1;g=meta.k8s.io,application/json', kinds)).to.deep.equal({ as: 'Table', version: 'v1' });
      expect(negotiate('application/json;as=Table;v=v1beta1;g=meta.k8s.io', kinds)).to.deep.equal({ as: 'Table', version: 'v1beta1' });
      expect(negotiate('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json', kinds)).to.deep.equal({ as: 'object' });
      expect(negotiate('application/vnd.kubernetes.protobuf,application/json', kinds)).to.deep.equal({ as: 'object' });
      expect(negotiate('application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io', kinds)).to.deep.equal({ as: 'Table', version: 'v1' });
      expect(() => negotiate('application/vnd.kubernetes.protobuf', kinds))
        .to.throw(ApiError)
        .with.property('code', 406);
      expect(() => negotiate('application/json;as=Table;v=v2;g=meta.k8s.io', kinds)).to.throw(ApiError);
    });
  });

  describe('ages', () => {
    it('read like kubectl (apimachinery HumanDuration)', () => {
      const s = 1000;
      expect(humanDuration(-5 * s)).to.equal('<invalid>');
      expect(humanDuration(-1 * s)).to.equal('0s');
      expect(humanDuration(5 * s)).to.equal('5s');
      expect(humanDuration(119 * s)).to.equal('119s');
      expect(humanDuration(3 * 60 * s + 20 * s)).to.equal('3m20s');
      expect(humanDuration(5 * 60 * s)).to.equal('5m');
      expect(humanDuration(42 * 60 * s)).to.equal('42m');
      expect(humanDuration((3 * 60 + 30) * 60 * s)).to.equal('3h30m');
      expect(humanDuration(20 * 3600 * s)).to.equal('20h');
      expect(humanDuration((2 * 24 + 4) * 3600 * s)).to.equal('2d4h');
      expect(humanDuration(30 * 24 * 3600 * s)).to.equal('30d');
      expect(humanDuration((3 * 365 + 10) * 24 * 3600 * s)).to.equal('3y10d');
      expect(humanDuration(9 * 365 * 24 * 3600 * s)).to.equal('9y');
    });
  });

  describe('toStatus', () => {
    it('renders Kubernetes reasons and codes; Invalid is 422 with cause reasons', () => {
      const st = toStatus(
        invalid('Agent', 'a', [
          { field: 'spec.role', message: 'must be one of "manager"' },
          { field: 'spec.model', message: 'is required' },
        ]),
        'agentplane.io',
      );
      expect(st).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 });
      expect(st.details).to.deep.equal({
        name: 'a',
        group: 'agentplane.io',
        kind: 'Agent',
        causes: [
          { reason: 'FieldValueNotSupported', message: 'must be one of "manager"', field: 'spec.role' },
          { reason: 'FieldValueRequired', message: 'is required', field: 'spec.model' },
        ],
      });
      expect(toStatus(notFound('Agent', 'x', 'ns')).code).to.equal(404);
      expect(toStatus(conflict('busy')).reason).to.equal('Conflict');
      expect(toStatus(expired('5'))).to.include({ reason: 'Expired', code: 410 });
      expect(toStatus(new ApiError('Forbidden', 403, 'no'))).to.include({ reason: 'Forbidden', code: 403 });
      expect(toStatus(new ApiError('UnsupportedMediaType', 415, 'no'))).to.include({ code: 415 });
      expect(toStatus(new ApiError('BadGateway', 502, 'down'))).to.include({ reason: 'InternalError', code: 502 });
      expect(toStatus(new ApiError('BadRequest', 400, 'x', { agents: ['a'] }))).to.not.have.property('details');
    });
  });

  describe('agent strategy on update', () => {
    const base = (): Agent => ({
      apiVersion: 'agentplane.io/v1alpha1',
      kind: 'Agent',
      metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '3', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { instructions: 'one', model: 'm', templateRef: 'default', role: 'manager', connectors: [], lifecycle: '', task: 1 },
      status: { status: 'Running', taskStatus: 'Complete', lastTaskMessage: 'done', observedTask: 1 },
    });

    it('new instructions without a new task number assign the next task; the status shows it in progress', () => {
      const old = base();
      const next = structuredClone(old);
      next.spec.instructions = 'two';
      next.status.taskStatus = 'Error'; // ignored: status is not written through updates
      agentStrategy.prepareForUpdate(next, old);
      expect(next.spec.task).to.equal(2);
      expect(next.status).to.include({ taskStatus: 'InProgress', lastTaskMessage: '' });
      expect(agentStrategy.validateUpdate(next, old)).to.deep.equal([]);
    });

    it('an omitted task keeps its number; defaults fill omitted fields; busy agents refuse a new task (409)', () => {
      const old = base();
      const next = structuredClone(old);
      const spec = next.spec as Partial<Agent['spec']>;
      delete spec.task;
      delete spec.model;
      agentStrategy.prepareForUpdate(next, old);
      expect(next.spec).to.include({ task: 1, model: 'claude-sonnet-4-5' });

      const busy = base();
      busy.status.taskStatus = 'InProgress';
      const again = structuredClone(busy);
      again.spec.instructions = 'three';
      agentStrategy.prepareForUpdate(again, busy);
      const res = agentStrategy.validateUpdate(again, busy);
      expect(res).to.be.instanceOf(ApiError).with.property('reason', 'Conflict');
    });

    it('has table columns (Message only with -o wide) and selectable fields', () => {
      const cols = agentStrategy.table.columns.map((c) => `${c.name}:${c.priority}`);
      expect(cols).to.deep.equal(['Name:0', 'Status:0', 'Task:0', 'Model:0', 'Age:0', 'Message:1']);
      const row = agentStrategy.table.row(base(), Date.parse('2026-01-01T00:05:00Z'));
      expect(row).to.deep.equal(['a', 'Running', 'Complete', 'm', '5m', 'done']);
      expect(agentStrategy.selectableFields(base())).to.include({ 'metadata.name': 'a', 'metadata.namespace': 'default', 'status.taskStatus': 'Complete' });
    });
  });
});
