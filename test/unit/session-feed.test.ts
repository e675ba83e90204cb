import { expect } from 'chai';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { SessionFeed } from '../../pkg/worker/engine-session.js';
import { TaskInput } from '../../pkg/worker/task-input.js';

const contentOf = (r: IteratorResult<SDKUserMessage>): unknown => (r.done ? 'done' : r.value.message.content);

describe('SessionFeed', () => {
  it('feeds task after task into one input that stays open between them, and ends when told', async () => {
    const feed = new SessionFeed();
    const it = feed[Symbol.asyncIterator]();
    const first = new TaskInput('task one');
    feed.attach(first);
    expect(contentOf(await it.next())).to.equal('task one');
    first.push('a follow-up');
    expect(contentOf(await it.next())).to.equal('a follow-up');

    const between = it.next(); // the first task ends; the input must not
    first.close();
    let settled = false;
    void between.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled, 'still open between tasks').to.equal(false);

    feed.attach(new TaskInput('task two'));
    expect(contentOf(await between)).to.equal('task two');

    const ending = it.next();
    feed.end();
    expect((await ending).done).to.equal(true);
  });

  it('drops what a cancelled task had not handed over', async () => {
    const feed = new SessionFeed();
    const it = feed[Symbol.asyncIterator]();
    const task = new TaskInput('task');
    feed.attach(task);
    expect(contentOf(await it.next())).to.equal('task');
    task.push('never taken');
    task.discard();
    expect(task.pending).to.equal(false);
    task.close();
    const next = it.next();
    feed.attach(new TaskInput('the next task'));
    expect(contentOf(await next)).to.equal('the next task');
  });
});
