import { expect } from 'chai';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { TaskInput } from '../../pkg/worker/task-input.js';

const contentOf = (m: SDKUserMessage): unknown => m.message.content;

describe('TaskInput', () => {
  it('yields the prompt, then follow-ups as they come, and ends when closed', async () => {
    const input = new TaskInput('the task');
    const it = input[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).to.equal(false);
    expect(first.value).to.deep.include({ type: 'user', parent_tool_use_id: null });
    expect(contentOf(first.value as SDKUserMessage)).to.equal('the task');

    const waiting = it.next(); // nothing queued yet: waits for a push
    expect(input.push('and this')).to.equal(true);
    expect(contentOf((await waiting).value as SDKUserMessage)).to.equal('and this');

    const ending = it.next();
    input.close();
    expect((await ending).done).to.equal(true);
    expect(input.push('too late')).to.equal(false);
  });

  it('counts a follow-up as pending until the engine echoes its uuid', async () => {
    const input = new TaskInput('the task');
    const it = input[Symbol.asyncIterator]();
    const prompt = (await it.next()).value as SDKUserMessage;
    input.seen(prompt.uuid); // the prompt's echo is not a follow-up
    expect(input.pending).to.equal(false);
    input.push('more');
    expect(input.pending).to.equal(true);
    const more = (await it.next()).value as SDKUserMessage;
    expect(more.uuid).to.be.a('string').and.not.equal(prompt.uuid);
    input.seen(more.uuid);
    expect(input.pending).to.equal(false);
  });

  it('reports follow-ups pushed before the task started reporting, in order, then each as it comes', () => {
    const input = new TaskInput('the task');
    input.push('one');
    input.push('two');
    const reported: string[] = [];
    input.onFollowUp((c) => reported.push(c));
    expect(reported).to.deep.equal(['one', 'two']);
    input.push('three');
    expect(reported).to.deep.equal(['one', 'two', 'three']);
  });
});
