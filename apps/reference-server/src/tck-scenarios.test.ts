/**
 * The A2A TCK's scenarios through the native API: the demo agent picks them by the id prefix of the
 * task's last user message, whatever its text, and leaves every other id to its commands.
 */
import { createMessage, createTask, type Task, type TaskEvent } from '@agent/core';
import type { Agent } from '@agent/runtime';
import { createDemoAgent } from './demo-agent.js';
import { TCK_FILE, TCK_STREAMING_TIMEOUT_MS } from './tck-scenarios.js';

jest.setTimeout(30_000);

/** A task whose one user message has the id the TCK would send for `prefix`. */
function tckTask(prefix: string, text = 'whatever the TCK says'): Task {
  return createTask(createMessage(text, { id: `${prefix}-${Math.random().toString(36).slice(2)}` }));
}

function agentTexts(task: Task): unknown[] {
  return task.messages.filter((m) => m.role === 'agent').map((m) => m.parts[0]?.content);
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** The events a stream reader sees, reduced to what the TCK's streaming scenarios name. */
function outline(events: TaskEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.type === 'task.status') return [`status ${event.state}${event.final ? ' (final)' : ''}`];
    if (event.type === 'task.artifact')
      return [
        `artifact ${JSON.stringify(event.artifact.parts.map((p) => p.content))}` +
          `${event.append ? ' append' : ''}${event.last_chunk ? ' last' : ''}`,
      ];
    return [];
  });
}

describe('the demo agent as the A2A TCK system under test', () => {
  let agent: Agent;
  beforeAll(() => {
    agent = createDemoAgent();
  });
  afterAll(async () => {
    await agent.stop();
  });

  it('completes tck-complete-task with "Hello from TCK", whatever the text', async () => {
    const done = await agent.runTask(tckTask('tck-complete-task', 'echo not this'));
    expect(done.state).toBe('completed');
    expect(agentTexts(done)).toEqual(['Hello from TCK']);
    expect(done.artifacts).toEqual([]);
  });

  it('answers tck-artifact-* with one artifact of that part kind', async () => {
    const parts = async (prefix: string) => {
      const done = await agent.runTask(tckTask(prefix));
      expect(done.state).toBe('completed');
      expect(done.artifacts).toHaveLength(1);
      return done.artifacts[0]!.parts;
    };
    expect(await parts('tck-artifact-text')).toEqual([{ type: 'text', content: 'Generated text content' }]);
    const [file] = await parts('tck-artifact-file');
    expect(file).toEqual({
      type: 'file',
      content: {
        bytes: Buffer.from(TCK_FILE.text).toString('base64'),
        media_type: 'text/plain',
        filename: 'output.txt',
      },
    });
    expect(await parts('tck-artifact-file-url')).toEqual([
      {
        type: 'file',
        content: { url: 'https://example.com/output.txt', media_type: 'text/plain', filename: 'output.txt' },
      },
    ]);
    expect(await parts('tck-artifact-data')).toEqual([
      { type: 'data', content: { key: 'value', count: 42 } },
    ]);
  });

  it('answers tck-message-response with one agent message and nothing else', async () => {
    const done = await agent.runTask(tckTask('tck-message-response'));
    expect(done.state).toBe('completed');
    expect(agentTexts(done)).toEqual(['Direct message response']);
    expect(done.artifacts).toEqual([]);
  });

  it('stops tck-input-required for input, and the next message on the task completes it', async () => {
    const asked = await agent.runTask(tckTask('tck-input-required'));
    expect(asked.state).toBe('input-required');
    expect(asked.messages.at(-1)).toMatchObject({ role: 'agent' });
    expect(String(agentTexts(asked)[0])).toMatch(/input/i);

    const answered = await agent.runTask({
      ...asked,
      messages: [...asked.messages, createMessage('here is the input')],
    });
    expect(answered.state).toBe('completed');
    expect(answered.id).toBe(asked.id);
    expect(agentTexts(answered)).toHaveLength(2);
  });

  it('stops tck-auth-required for authorization the same way', async () => {
    const asked = await agent.runTask(tckTask('tck-auth-required'));
    expect(asked.state).toBe('auth-required');
    const answered = await agent.runTask({ ...asked, messages: [...asked.messages, createMessage('done')] });
    expect(answered.state).toBe('completed');
  });

  it('rejects tck-reject-task', async () => {
    const done = await agent.runTask(tckTask('tck-reject-task'));
    expect(done.state).toBe('rejected');
    expect(agentTexts(done)).toEqual(['rejected']);
  });

  it.each([
    ['tck-stream-001', 'Stream hello from TCK'],
    ['tck-stream-003', 'Stream task lifecycle'],
    ['tck-stream-ordering-001', 'Ordered output'],
    ['tck-stream-artifact-text', 'Streamed text content'],
  ])('streams %s as working, one whole text artifact, completed', async (prefix, text) => {
    const events = await collect(agent.handleTaskStreaming(tckTask(prefix)));
    expect(outline(events)).toEqual([
      'status working',
      `artifact ${JSON.stringify([text])} last`,
      'status completed (final)',
    ]);
  });

  it('streams tck-stream-002 as working, completed', async () => {
    const events = await collect(agent.handleTaskStreaming(tckTask('tck-stream-002')));
    expect(outline(events)).toEqual(['status working', 'status completed (final)']);
  });

  it('streams tck-stream-artifact-file as one file artifact', async () => {
    const events = await collect(agent.handleTaskStreaming(tckTask('tck-stream-artifact-file')));
    const artifacts = events.filter((e) => e.type === 'task.artifact');
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({
      artifact: { parts: [{ type: 'file', content: { filename: 'output.txt', media_type: 'text/plain' } }] },
    });
    expect(outline(events).at(-1)).toBe('status completed (final)');
  });

  it('streams tck-stream-artifact-chunked as two chunks of one artifact, the second appended and last', async () => {
    const events = await collect(agent.handleTaskStreaming(tckTask('tck-stream-artifact-chunked')));
    expect(outline(events)).toEqual([
      'status working',
      'artifact ["chunk-1 "]',
      'artifact ["chunk-2"] append last',
      'status completed (final)',
    ]);
    const ids = events.flatMap((e) => (e.type === 'task.artifact' ? [e.artifact.id] : []));
    expect(new Set(ids).size).toBe(1);
    const final = events.at(-1);
    expect(final?.type === 'task.status' && final.task?.artifacts[0]?.parts).toEqual([
      { type: 'text', content: 'chunk-1 ' },
      { type: 'text', content: 'chunk-2' },
    ]);
  });

  it('works twice the TCK streaming timeout on test-resubscribe-message-id, and tck-delayed-complete once, reporting progress', async () => {
    const started = Date.now();
    const [resubscribe, delayed] = await Promise.all([
      collect(agent.handleTaskStreaming(tckTask('test-resubscribe-message-id'))),
      collect(agent.handleTaskStreaming(tckTask('tck-delayed-complete'))),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * TCK_STREAMING_TIMEOUT_MS - 50);
    expect(resubscribe.filter((e) => e.type === 'task.progress').length).toBeGreaterThanOrEqual(4);
    expect(outline(resubscribe)).toEqual(['status working', 'status completed (final)']);
    const final = delayed.at(-1);
    expect(final?.type === 'task.status' && final.state).toBe('completed');
    expect(final?.type === 'task.status' && final.task && agentTexts(final.task)).toEqual([
      'Done after delay',
    ]);
  });

  it('leaves other ids to the commands', async () => {
    const echoed = await agent.runTask(createTask(createMessage('echo hi', { id: 'tck-unknown-1' })));
    expect(agentTexts(echoed)).toEqual(['hi']);
    const plain = await agent.runTask(createTask('echo tck-complete-task'));
    expect(agentTexts(plain)).toEqual(['tck-complete-task']);
  });
});
