import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { MAX_DELAY_MS, currentTask, nextTurn, parseScript, startScriptedModel, type ScriptedModel, type Turn } from '../../pkg/scriptedmodel/index.js';

const reminder = (text: string) => ({ type: 'text', text: `<system-reminder>${text}</system-reminder>` });
const userTask = (prompt: string) => ({ role: 'user', content: [reminder('env'), reminder('claude.md'), { type: 'text', text: prompt }] });
const toolUse = (id: string, name = 'Bash') => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name, input: {} }],
});
const toolResult = (id: string, content: unknown) => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content, is_error: false }],
});
const assistantText = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
const TOOLS = [{ name: 'Bash', description: 'run a command', input_schema: { type: 'object' as const, properties: {} } }];
const request = (messages: unknown[]) => ({ model: 'claude-test', max_tokens: 1000, stream: true, tools: TOOLS, messages });

const textOfTurn = (t: Turn): string => {
  expect(t.kind).to.equal('message');
  if (t.kind !== 'message') return '';
  const b = t.content[0];
  expect(b?.type).to.equal('text');
  return b?.type === 'text' ? b.text : '';
};

describe('scriptedmodel', () => {
  describe('parseScript', () => {
    it('parses every directive kind and ignores prose', () => {
      const s = parseScript(
        [
          'Please do the thing.',
          '@bash echo hi',
          '  @write out/a.txt line1\\nline2 ',
          '@tool mcp__server__echo {"text":"x"}',
          '@delay 250',
          '@fail 400 invalid_request_error bad things happened',
          '@say all done',
          'an @ mid-line is prose, and so is @unknown below',
          '@unknown directive',
        ].join('\n'),
      );
      expect(s.notes).to.deep.equal([]);
      expect(s.directives).to.deep.equal([
        { kind: 'bash', command: 'echo hi' },
        { kind: 'write', path: 'out/a.txt', content: 'line1\nline2 ' },
        { kind: 'tool', name: 'mcp__server__echo', input: { text: 'x' } },
        { kind: 'delay', ms: 250 },
        { kind: 'fail', status: 400, type: 'invalid_request_error', message: 'bad things happened' },
        { kind: 'say', text: 'all done' },
      ]);
    });

    it('keeps absolute write paths and allows empty content', () => {
      expect(parseScript('@write /tmp/x.txt').directives).to.deep.equal([{ kind: 'write', path: '/tmp/x.txt', content: '' }]);
    });

    it('degrades malformed directives into notes instead of throwing', () => {
      const s = parseScript(
        ['@tool a {not json', '@tool b [1,2]', '@tool c', '@bash', '@write', '@delay soon', '@delay 999999', '@fail 200', '@tool'].join('\r\n'),
      );
      expect(s.directives).to.deep.equal([
        { kind: 'tool', name: 'a', input: {} },
        { kind: 'tool', name: 'b', input: {} },
        { kind: 'tool', name: 'c', input: {} },
        { kind: 'delay', ms: MAX_DELAY_MS },
        { kind: 'fail', status: 400, type: 'invalid_request_error', message: 'scripted failure' },
      ]);
      expect(s.notes).to.have.length(7);
      expect(s.notes[0]).to.match(/^line 1: @tool a: input is not valid JSON/);
      expect(s.notes[1]).to.match(/^line 2: @tool b: input is not a JSON object/);
    });

    it('never throws on arbitrary input', () => {
      for (const junk of ['', '@', '@@bash x', '\n\n@say', '@fail x y', '@tool x {"a":', '\u0000@bash \u0000']) {
        expect(() => parseScript(junk)).not.to.throw();
      }
    });
  });

  describe('currentTask', () => {
    it('takes the prompt from the non-reminder text blocks and counts assistant turns', () => {
      const task = currentTask([
        {
          role: 'user',
          content: [reminder('a'), { type: 'text', text: 'line one' }, { type: 'text', text: '@bash ls' }],
        },
        toolUse('t1'),
        toolResult('t1', [{ type: 'text', text: 'file-a\nfile-b' }]),
        { role: 'user', content: [reminder('todo list is empty')] },
      ]);
      expect(task).to.deep.equal({ prompt: 'line one\n@bash ls', step: 1, lastToolResult: 'file-a\nfile-b' });
    });

    it('takes the newest scripted text when a failed turn left two tasks in one user message', () => {
      const task = currentTask([
        {
          role: 'user',
          content: [
            { type: 'text', text: '@fail 500 api_error no' },
            { type: 'text', text: '@say fine again' },
          ],
        },
      ]);
      expect(task).to.deep.equal({ prompt: '@say fine again', step: 0 });
    });

    it('accepts plain string content and finds nothing in reminder-only conversations', () => {
      expect(currentTask([{ role: 'user', content: 'hi' }])).to.deep.equal({ prompt: 'hi', step: 0 });
      expect(currentTask([{ role: 'user', content: [reminder('x')] }])).to.equal(undefined);
      expect(currentTask([])).to.equal(undefined);
    });
  });

  describe('nextTurn', () => {
    const script = '@bash echo one\n@delay 1500\n@write notes.md hello\\nworld\n@say finished';

    it('plays directives in order, one per assistant turn', () => {
      const t0 = nextTurn(request([userTask(script)]));
      expect(t0).to.deep.equal({
        kind: 'message',
        content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo one', description: 'Run echo one' } }],
        stopReason: 'tool_use',
        delayMs: 0,
      });

      const t1 = nextTurn(request([userTask(script), toolUse('a'), toolResult('a', 'one')]));
      expect(t1).to.deep.equal({
        kind: 'message',
        content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'notes.md', content: 'hello\nworld' } }],
        stopReason: 'tool_use',
        delayMs: 1500,
      });

      const t2 = nextTurn(request([userTask(script), toolUse('a'), toolResult('a', 'one'), toolUse('b', 'Write'), toolResult('b', 'ok')]));
      expect(t2).to.deep.equal({ kind: 'message', content: [{ type: 'text', text: 'finished' }], stopReason: 'end_turn', delayMs: 0 });
    });

    it('truncates long bash descriptions', () => {
      const cmd = `echo ${'x'.repeat(100)}`;
      const t = nextTurn(request([userTask(`@bash ${cmd}`)]));
      if (t.kind !== 'message' || t.content[0]?.type !== 'tool_use') throw new Error('expected a tool_use turn');
      const input = t.content[0].input as { command: string; description: string };
      expect(input.command).to.equal(cmd);
      expect(input.description.length).to.be.at.most('Run '.length + 60);
    });

    it('ends with "Done." when there is no @say, carrying trailing delays and notes', () => {
      const msgs = [userTask('@tool mcp__s__echo {"text":"hi"}\n@delay 40'), toolUse('a', 'mcp__s__echo'), toolResult('a', 'hi')];
      expect(nextTurn(request(msgs))).to.deep.equal({
        kind: 'message',
        content: [{ type: 'text', text: 'Done.' }],
        stopReason: 'end_turn',
        delayMs: 40,
      });
      expect(textOfTurn(nextTurn(request([userTask('@tool x {oops'), toolUse('a', 'x'), toolResult('a', '')])))).to.match(
        /^Done\. \(script notes: line 1: @tool x: input is not valid JSON/,
      );
    });

    it('turns @fail into an error response', () => {
      expect(nextTurn(request([userTask('@delay 5\n@fail 400 invalid_request_error nope')]))).to.deep.equal({
        kind: 'error',
        status: 400,
        type: 'invalid_request_error',
        message: 'nope',
        delayMs: 5,
      });
    });

    it('runs the demo when the prompt has no directives', () => {
      const prompt = 'Tidy up the repo\nand more details';
      const t0 = nextTurn(request([userTask(prompt)]));
      expect(t0.kind === 'message' && t0.content[0]).to.deep.equal({
        type: 'tool_use',
        name: 'Bash',
        input: { command: 'pwd && ls -la', description: 'Run pwd && ls -la' },
      });
      const t1 = nextTurn(request([userTask(prompt), toolUse('a'), toolResult('a', [{ type: 'text', text: '/work/agent\ntotal 0' }])]));
      expect(textOfTurn(t1)).to.equal('I looked around my workspace: /work/agent ... Your task was: Tidy up the repo');
    });

    it('answers auxiliary requests without tools with "ok"', () => {
      const t = nextTurn({ model: 'm', messages: [userTask('@fail 400 invalid_request_error x')] });
      expect(textOfTurn(t)).to.equal('ok');
      expect(textOfTurn(nextTurn(undefined))).to.equal('ok');
      expect(textOfTurn(nextTurn(request([{ role: 'user', content: [reminder('only')] }])))).to.equal('ok');
    });

    it('counts steps from the latest task of a resumed session', () => {
      const earlier = [userTask('@bash echo old\n@say old done'), toolUse('a'), toolResult('a', 'old'), assistantText('old done')];
      const t0 = nextTurn(request([...earlier, userTask('@say second task')]));
      expect(textOfTurn(t0)).to.equal('second task');

      const resumed = [...earlier, userTask('@bash echo new\n@say new done')];
      const t1 = nextTurn(request(resumed));
      expect(t1.kind === 'message' && t1.content[0]).to.deep.include({ type: 'tool_use', name: 'Bash' });
      expect(textOfTurn(nextTurn(request([...resumed, toolUse('b'), toolResult('b', 'new')])))).to.equal('new done');
    });
  });

  describe('follow-ups sent mid-task', () => {
    // How the engine folds a message sent while it works: a message of its own after the tool result.
    const folded = (text: string) => ({
      role: 'system',
      content: [{ type: 'text', text: `The user sent a new message while you were working:\n${text}\n\nAddress the message above.` }],
    });
    const env = { role: 'system', content: '# Environment\nYou have been invoked in the following environment' };
    const started = [userTask('@bash echo one\n@say first plan'), env, toolUse('a'), toolResult('a', 'one')];

    it('parses @echo', () => {
      expect(parseScript('say back\n@echo').directives).to.deep.equal([{ kind: 'echo' }]);
    });

    it('lets a folded follow-up with directives take over the script', () => {
      const msgs = [...started, folded('Also run two\n@bash echo two\n@say second plan')];
      const t0 = nextTurn(request(msgs));
      expect(t0.kind === 'message' && t0.content[0]).to.deep.include({
        type: 'tool_use',
        name: 'Bash',
        input: { command: 'echo two', description: 'Run echo two' },
      });
      expect(textOfTurn(nextTurn(request([...msgs, toolUse('b'), toolResult('b', 'two')])))).to.equal('second plan');
    });

    it('finds a follow-up folded into a tool result as a system reminder, but never reads tool output as one', () => {
      const inResult = toolResult('a', `one\n\n<system-reminder>\nThe user sent a new message:\nMention pineapples\n@echo\n</system-reminder>`);
      const t = nextTurn(request([started[0], env, toolUse('a'), inResult]));
      expect(textOfTurn(t)).to.equal('The user sent a new message:\nMention pineapples');
      const output = toolResult('a', 'cat says:\n@say not a follow-up');
      expect(textOfTurn(nextTurn(request([started[0], env, toolUse('a'), output])))).to.equal('first plan');
    });

    it('ignores engine messages without directives (the environment, a plain follow-up)', () => {
      expect(textOfTurn(nextTurn(request(started)))).to.equal('first plan');
      expect(textOfTurn(nextTurn(request([...started, folded('just so you know')])))).to.equal('first plan');
      const inline = { role: 'user', content: [...toolResult('a', 'one').content, { type: 'text', text: 'just so you know' }] };
      expect(textOfTurn(nextTurn(request([started[0], env, toolUse('a'), inline])))).to.equal('first plan');
    });

    it('@echo answers with the text of the message it came in, directive lines left out', () => {
      const t = nextTurn(request([...started, folded('Mention pineapples\n@echo')]));
      expect(textOfTurn(t)).to.match(/^The user sent a new message while you were working:\nMention pineapples\n\nAddress/);
      expect(textOfTurn(nextTurn(request([userTask('repeat me\n@echo')])))).to.equal('repeat me');
      expect(textOfTurn(nextTurn(request([userTask('@echo')])))).to.equal('(nothing to echo)');
    });

    it('treats a follow-up that came as its own turn like a new prompt', () => {
      const t = nextTurn(request([...started, assistantText('first plan'), { role: 'user', content: 'pineapples too\n@echo' }]));
      expect(textOfTurn(t)).to.equal('pineapples too');
    });
  });

  describe('server', () => {
    const KEY = 'sk-test-key';
    let model: ScriptedModel;
    let client: Anthropic;

    beforeEach(async () => {
      model = await startScriptedModel({ apiKey: KEY });
      client = new Anthropic({ apiKey: KEY, baseURL: model.url, maxRetries: 0 });
    });
    afterEach(async () => {
      await model.close();
    });

    const user = (text: string): Anthropic.MessageParam[] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>x</system-reminder>' },
          { type: 'text', text },
        ],
      },
    ];

    it('listens on 127.0.0.1 with an ephemeral port', () => {
      expect(model.url).to.equal(`http://127.0.0.1:${model.port}`);
      expect(model.port).to.be.greaterThan(0);
    });

    it('answers a non-streaming request and records it', async () => {
      const msg = await client.messages.create({
        model: 'claude-x',
        max_tokens: 100,
        system: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
        tools: TOOLS,
        messages: user('@say hello there'),
      });
      expect(msg.type).to.equal('message');
      expect(msg.role).to.equal('assistant');
      expect(msg.id).to.match(/^msg_[0-9a-f]+$/);
      expect(msg.model).to.equal('claude-x');
      expect(msg.stop_reason).to.equal('end_turn');
      expect(msg.content).to.deep.equal([{ type: 'text', text: 'hello there' }]);
      expect(msg.usage.input_tokens).to.be.greaterThan(0);
      expect(msg.usage.output_tokens).to.be.greaterThan(0);
      expect(model.requests).to.deep.equal([
        {
          path: '/v1/messages',
          model: 'claude-x',
          apiKey: KEY,
          hasTools: true,
          lastUserText: '@say hello there',
          system: 'first\nsecond',
          tools: TOOLS.map((t) => t.name),
          userTexts: ['@say hello there'],
          // The reminder and the tools' descriptions: what the engine told the model besides the prompt.
          notes: ['x', ...TOOLS.map((t) => `${t.name}: ${t.description}`)],
          receivedAt: model.requests[0]?.receivedAt,
        },
      ]);
      expect(Date.now() - model.requests[0].receivedAt).to.be.within(0, 10_000);
    });

    it('streams a tool_use turn that the SDK assembles', async () => {
      const stream = client.messages.stream({ model: 'claude-x', max_tokens: 100, tools: TOOLS, messages: user('@bash ls -la /tmp') });
      const seen: string[] = [];
      stream.on('streamEvent', (e) => seen.push(e.type));
      const msg = await stream.finalMessage();
      expect(seen).to.deep.equal(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
      expect(msg.stop_reason).to.equal('tool_use');
      const block = msg.content[0];
      if (block?.type !== 'tool_use') throw new Error(`expected tool_use, got ${block?.type}`);
      expect(block.id).to.match(/^toolu_[0-9a-f]+$/);
      expect(block.name).to.equal('Bash');
      expect(block.input).to.deep.equal({ command: 'ls -la /tmp', description: 'Run ls -la /tmp' });
      expect(msg.usage.output_tokens).to.be.greaterThan(0);
    });

    it('streams text with stream: true and emits event: lines on the wire', async () => {
      const events = await client.messages.create({
        model: 'claude-x',
        max_tokens: 100,
        stream: true,
        tools: TOOLS,
        messages: [...user('@bash true\n@say all good'), toolUse('toolu_1'), toolResult('toolu_1', 'ok')] as Anthropic.MessageParam[],
      });
      let text = '';
      let stop: string | null = null;
      for await (const e of events) {
        if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
        if (e.type === 'message_delta') stop = e.delta.stop_reason;
      }
      expect(text).to.equal('all good');
      expect(stop).to.equal('end_turn');

      const res = await fetch(`${model.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(request(user('@say raw'))),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      const raw = await res.text();
      expect(raw.startsWith('event: message_start\ndata: {"type":"message_start"')).to.equal(true);
      expect(raw.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).to.equal(true);
      expect(model.requests.at(-1)?.path).to.equal('/v1/messages');
    });

    it('counts tokens', async () => {
      const text = 'x'.repeat(400);
      const res = await client.messages.countTokens({ model: 'claude-x', messages: [{ role: 'user', content: text }] });
      expect(res.input_tokens).to.equal(100);
      const tiny = await client.messages.countTokens({ model: 'claude-x', messages: [{ role: 'user', content: '' }] });
      expect(tiny.input_tokens).to.equal(1);
      expect(model.requests[0]?.path).to.equal('/v1/messages/count_tokens');
    });

    it('answers requests without tools with "ok"', async () => {
      const msg = await client.messages.create({ model: 'claude-x', max_tokens: 10, messages: user('@fail 400 invalid_request_error no') });
      expect(msg.content).to.deep.equal([{ type: 'text', text: 'ok' }]);
      expect(model.requests[0]?.hasTools).to.equal(false);
    });

    it('rejects a wrong key with 401 and accepts the right Bearer token', async () => {
      const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: model.url, maxRetries: 0 });
      const err = await wrong.messages.create({ model: 'claude-x', max_tokens: 10, messages: user('@say hi') }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
      const apiErr = err as InstanceType<typeof Anthropic.AuthenticationError>;
      expect(apiErr.status).to.equal(401);
      expect(apiErr.error).to.deep.equal({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
      expect(model.requests[0]?.apiKey).to.equal('sk-wrong');

      const bearer = new Anthropic({ apiKey: null, authToken: KEY, baseURL: model.url, maxRetries: 0 });
      const msg = await bearer.messages.create({ model: 'claude-x', max_tokens: 10, tools: TOOLS, messages: user('@say via bearer') });
      expect(msg.content).to.deep.equal([{ type: 'text', text: 'via bearer' }]);
      expect(model.requests[1]?.apiKey).to.equal(KEY);
    });

    it('replies to @fail with the scripted status and error body', async () => {
      const err = await client.messages
        .create({ model: 'claude-x', max_tokens: 10, tools: TOOLS, messages: user('@fail 400 invalid_request_error scripted boom') })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).to.be.instanceOf(Anthropic.BadRequestError);
      expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).to.deep.equal({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'scripted boom' },
      });
    });

    it('answers unknown routes and malformed bodies with Anthropic errors', async () => {
      const notFound = await fetch(`${model.url}/v1/models`, { headers: { 'x-api-key': KEY } });
      expect(notFound.status).to.equal(404);
      expect(((await notFound.json()) as { error: { type: string } }).error.type).to.equal('not_found_error');
      const bad = await fetch(`${model.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': KEY }, body: '{nope' });
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
    });

    it('delays the response by @delay', async () => {
      const started = Date.now();
      const msg = await client.messages.create({ model: 'claude-x', max_tokens: 10, tools: TOOLS, messages: user('@delay 300\n@say late') });
      expect(Date.now() - started).to.be.at.least(290);
      expect(msg.content).to.deep.equal([{ type: 'text', text: 'late' }]);
    });

    it('closes promptly while a delayed response is pending', async () => {
      const pending = client.messages.create({ model: 'claude-x', max_tokens: 10, tools: TOOLS, messages: user('@delay 60000\n@say never') }).then(
        () => 'answered',
        () => 'failed',
      );
      while (model.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
      const started = Date.now();
      await model.close();
      expect(Date.now() - started).to.be.below(2000);
      expect(await pending).to.equal('failed');
    });
  });
});

describe('scriptedmodel @fail … xN', () => {
  it('parses the count and keeps it out of the message', () => {
    expect(parseScript('@fail 529 overloaded_error the model is busy x3').directives).to.deep.equal([
      { kind: 'fail', status: 529, type: 'overloaded_error', message: 'the model is busy', times: 3 },
    ]);
    expect(parseScript('@fail 500 api_error boom').directives[0]).to.not.have.property('times');
  });

  it('fails N requests of the turn, then plays the next directive in its place', async () => {
    const model = await startScriptedModel();
    try {
      const send = () =>
        fetch(`${model.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...request([userTask('@fail 529 overloaded_error busy x2\n@say through')]), stream: false }),
        });
      expect((await send()).status).to.equal(529);
      expect((await send()).status).to.equal(529);
      const ok = await send();
      expect(ok.status).to.equal(200);
      expect(((await ok.json()) as { content: { text: string }[] }).content[0].text).to.equal('through');
    } finally {
      await model.close();
    }
  });
});
