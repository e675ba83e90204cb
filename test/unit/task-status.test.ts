import { expect } from 'chai';

import { type Agent, type AgentStatus, onlyMessageMoved } from '../../pkg/api/agent.js';
import type { AgentEvent, EventPayloads, EventType } from '../../pkg/api/event.js';
import { applyEvent, describeToolCall, movesMessage } from '../../pkg/controller/task-status.js';
import { idleAgentDraft } from '../support/objects.js';

const fresh = (over: Partial<AgentStatus> = {}): AgentStatus => ({
  status: 'Running',
  taskStatus: '',
  lastTaskMessage: '',
  observedTask: 1,
  ...over,
});

let seq = 0;
function ev<T extends EventType>(type: T, payload: EventPayloads[T]): AgentEvent<T> {
  seq++;
  return { seq, agentName: 'a', namespace: 'default', task: 1, type, timestamp: new Date().toISOString(), payload };
}

const completed = (result: string, session_id = 'sess-1') =>
  ev('task_completed', { result, cost_usd: 0.01, duration_ms: 10, turns: 1, stop_reason: 'end_turn', session_id });

describe('task-status', () => {
  describe('applyEvent', () => {
    it('keeps the first line of CRLF text without the carriage return', () => {
      const s = fresh();
      applyEvent(s, ev('text', { content: 'line one\r\nline two' }));
      expect(s.lastTaskMessage).to.equal('line one');
    });

    it('never cuts a character in half when truncating', () => {
      const s = fresh();
      applyEvent(s, ev('text', { content: `${'a'.repeat(198)}😀😀😀` }));
      expect([...s.lastTaskMessage]).to.have.length(200);
      expect(s.lastTaskMessage.endsWith('a😀…')).to.equal(true);
      expect(s.lastTaskMessage).not.to.match(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    });

    it('task_started sets InProgress and "Started: <instructions>"', () => {
      const s = fresh({ taskStatus: 'Complete', lastTaskMessage: 'old' });
      applyEvent(s, ev('task_started', { instructions: 'fix the build' }));
      expect(s.taskStatus).to.equal('InProgress');
      expect(s.lastTaskMessage).to.equal('Started: fix the build');
    });

    it('text sets the message and keeps the task status', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, ev('text', { content: 'Looking at the repo' }));
      expect(s).to.deep.equal(fresh({ taskStatus: 'InProgress', lastTaskMessage: 'Looking at the repo' }));
    });

    it('tool_call describes the call', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, ev('tool_call', { id: 't1', tool: 'Bash', input: { command: 'npm test' } }));
      expect(s.lastTaskMessage).to.equal('Bash: npm test');
      expect(s.taskStatus).to.equal('InProgress');
    });

    it('user_message shows the follow-up and keeps the task status', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, ev('user_message', { content: 'also update the docs\nplease' }));
      expect(s).to.deep.equal(fresh({ taskStatus: 'InProgress', lastTaskMessage: 'Follow-up: also update the docs' }));
    });

    it('task_completed sets Complete, the result and the session id', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, completed('All done.\nDetails follow', 'sess-42'));
      expect(s.taskStatus).to.equal('Complete');
      expect(s.lastTaskMessage).to.equal('All done.');
      expect(s.sessionId).to.equal('sess-42');
    });

    it('task_completed with an empty result says "Completed" and keeps an earlier session id', () => {
      const s = fresh({ taskStatus: 'InProgress', sessionId: 'earlier' });
      applyEvent(s, completed('', ''));
      expect(s.lastTaskMessage).to.equal('Completed');
      expect(s.sessionId).to.equal('earlier');
    });

    it('task_cancelled sets Cancelled with the reason', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, ev('task_cancelled', { reason: 'cancelled by request' }));
      expect(s.taskStatus).to.equal('Cancelled');
      expect(s.lastTaskMessage).to.equal('Cancelled: cancelled by request');
    });

    it('error sets Error with the message', () => {
      const s = fresh({ taskStatus: 'InProgress' });
      applyEvent(s, ev('error', { message: 'rate limited', reason: 'ModelError' }));
      expect(s.taskStatus).to.equal('Error');
      expect(s.lastTaskMessage).to.equal('Error: rate limited');
    });

    it('movesMessage: exactly the events that change only the message (a later one supersedes an earlier one)', () => {
      const events = [
        ev('text', { content: 'y' }),
        ev('user_message', { content: 'more' }),
        ev('tool_call', { id: 't1', tool: 'Bash', input: { command: 'ls' } }),
        ev('thinking', { content: 'hmm' }),
        ev('tool_result', { id: 't1', tool: 'Bash', output: 'ok', isError: false }),
      ];
      for (const e of events) {
        const s = fresh({ taskStatus: 'InProgress', lastTaskMessage: 'before' });
        applyEvent(s, e);
        const changed = JSON.stringify(s) !== JSON.stringify(fresh({ taskStatus: 'InProgress', lastTaskMessage: 'before' }));
        expect(movesMessage(e), e.type).to.equal(changed);
        if (changed) expect(s).to.deep.equal(fresh({ taskStatus: 'InProgress', lastTaskMessage: s.lastTaskMessage }));
      }
    });

    it('thinking and tool_result change nothing', () => {
      const s = fresh({ taskStatus: 'InProgress', lastTaskMessage: 'keep me' });
      applyEvent(s, ev('thinking', { content: 'hmm' }));
      applyEvent(s, ev('tool_result', { id: 't1', tool: 'Bash', output: 'ok', isError: false }));
      expect(s).to.deep.equal(fresh({ taskStatus: 'InProgress', lastTaskMessage: 'keep me' }));
    });

    it('never touches status, observedTask or message', () => {
      const s = fresh({ status: 'Sleeping', observedTask: 7, message: 'm' });
      for (const e of [ev('task_started', { instructions: 'x' }), ev('text', { content: 'y' }), completed('z'), ev('error', { message: 'e', reason: 'r' })]) {
        applyEvent(s, e);
      }
      expect(s.status).to.equal('Sleeping');
      expect(s.observedTask).to.equal(7);
      expect(s.message).to.equal('m');
    });

    it('a full task sequence ends Complete with the result as message', () => {
      const s = fresh();
      const seen: string[] = [];
      for (const e of [
        ev('task_started', { instructions: 'go' }),
        ev('text', { content: 'on it' }),
        ev('tool_call', { id: '1', tool: 'Read', input: { file_path: '/w/a.txt' } }),
        ev('tool_result', { id: '1', tool: 'Read', output: 'content', isError: false }),
        completed('done'),
      ]) {
        applyEvent(s, e);
        seen.push(`${s.taskStatus}|${s.lastTaskMessage}`);
      }
      expect(seen).to.deep.equal(['InProgress|Started: go', 'InProgress|on it', 'InProgress|Read: /w/a.txt', 'InProgress|Read: /w/a.txt', 'Complete|done']);
    });

    describe('lastTaskMessage formatting', () => {
      const textMessage = (content: string): string => {
        const s = fresh();
        applyEvent(s, ev('text', { content }));
        return s.lastTaskMessage;
      };

      it('keeps only the first line, trimmed', () => {
        expect(textMessage('first line\nsecond line\nthird')).to.equal('first line');
        expect(textMessage('\n\n  leading blank lines\nnext')).to.equal('leading blank lines');
        expect(textMessage('   padded   ')).to.equal('padded');
      });

      it('keeps a 200-character line whole', () => {
        const s = 'x'.repeat(200);
        expect(textMessage(s)).to.equal(s);
      });

      it('truncates a longer line to 200 characters ending in "…"', () => {
        const out = textMessage(`${'y'.repeat(150)}${'z'.repeat(150)}\nsecond`);
        expect(out).to.have.length(200);
        expect(out.endsWith('…')).to.equal(true);
        expect(out).to.equal(`${'y'.repeat(150)}${'z'.repeat(49)}…`);
      });

      it('truncates prefixed messages too ("Started: " counts)', () => {
        const s = fresh();
        applyEvent(s, ev('task_started', { instructions: 'a'.repeat(500) }));
        expect(s.lastTaskMessage).to.have.length(200);
        expect(s.lastTaskMessage.startsWith('Started: aaa')).to.equal(true);
        expect(s.lastTaskMessage.endsWith('a…')).to.equal(true);
      });

      it('an empty text yields an empty message', () => {
        expect(textMessage('')).to.equal('');
        expect(textMessage('\n\n')).to.equal('');
      });
    });
  });

  describe('describeToolCall', () => {
    it('uses the first string among description, command, file_path, path, pattern, url', () => {
      expect(describeToolCall('Bash', { command: 'ls -la', description: 'List files' })).to.equal('Bash: List files');
      expect(describeToolCall('Bash', { command: 'ls -la' })).to.equal('Bash: ls -la');
      expect(describeToolCall('Edit', { file_path: '/w/x.ts', path: '/ignored' })).to.equal('Edit: /w/x.ts');
      expect(describeToolCall('Glob', { path: 'src', pattern: '**/*.ts' })).to.equal('Glob: src');
      expect(describeToolCall('Grep', { pattern: 'TODO' })).to.equal('Grep: TODO');
      expect(describeToolCall('WebFetch', { url: 'https://example.com' })).to.equal('WebFetch: https://example.com');
    });

    it('skips non-string candidates', () => {
      expect(describeToolCall('X', { description: 5, command: ['a'], url: 'u' })).to.equal('X: u');
    });

    it('falls back to the tool name alone', () => {
      expect(describeToolCall('TodoWrite', { todos: [] })).to.equal('TodoWrite');
      expect(describeToolCall('Noop', undefined)).to.equal('Noop');
      expect(describeToolCall('Noop', null)).to.equal('Noop');
    });
  });

  describe('onlyMessageMoved', () => {
    const stored = (): Agent => {
      const a = idleAgentDraft('a');
      a.metadata.resourceVersion = '7';
      a.status = fresh({ lastTaskMessage: 'reading files', taskStatus: 'InProgress' });
      return a;
    };
    const changed = (edit: (a: Agent) => void): Agent => {
      const a = structuredClone(stored());
      a.metadata.resourceVersion = '8';
      edit(a);
      return a;
    };

    it('is true for a write that moved only the message (resourceVersion and managedFields aside)', () => {
      const next = changed((a) => {
        a.status.lastTaskMessage = 'writing the answer';
        a.metadata.managedFields = [
          { manager: 'agentplane', operation: 'Update', apiVersion: 'agentplane.io/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: {}, subresource: 'status' },
        ];
      });
      expect(onlyMessageMoved(stored(), next)).to.equal(true);
    });

    it('is false when the message stayed, or anything else moved with it', () => {
      expect(
        onlyMessageMoved(
          stored(),
          changed(() => undefined),
        ),
      ).to.equal(false);
      const alsoMoved: ((a: Agent) => void)[] = [
        (a) => (a.status.taskStatus = 'Complete'),
        (a) => (a.status.sessionId = 's-2'),
        (a) => (a.status.conditions = [{ type: 'Asleep', status: 'True', reason: 'Idle', message: '', lastTransitionTime: '' }]),
        (a) => (a.spec.task = 2),
        (a) => (a.metadata.labels = { 'agentplane.io/squad': 'crew' }),
        (a) => (a.metadata.deletionTimestamp = new Date().toISOString()),
      ];
      for (const edit of alsoMoved) {
        const next = changed((a) => {
          a.status.lastTaskMessage = 'writing the answer';
          edit(a);
        });
        expect(onlyMessageMoved(stored(), next), edit.toString()).to.equal(false);
      }
    });
  });
});
