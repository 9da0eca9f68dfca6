import { createTask, type JsonObject, type Task, type TaskEvent } from '@agent/core';
import { InMemoryEventSink, type RunEvent } from '@agent/events';
import { Agent, type AgentOptions } from './agent.js';
import { approve } from './approvals.js';
import type { LLMResponse, LLMToolCall } from './llm/types.js';
import { collect, errorOf, finalStatuses, types } from './test-support/helpers.js';
import { ScriptedLLM, type ScriptStep } from './testing/index.js';

let callSeq = 0;
function call(name: string, args: JsonObject = {}): LLMToolCall {
  callSeq += 1;
  return { id: `call_${callSeq}`, name, arguments: args };
}
const answer = (content: string, usage?: LLMResponse['usage']): LLMResponse =>
  usage ? { content, toolCalls: [], usage } : { content, toolCalls: [] };
const tools = (...toolCalls: LLMToolCall[]): LLMResponse => ({ content: '', toolCalls });

function build(script: ScriptStep[], options: Partial<AgentOptions> = {}) {
  const llm = new ScriptedLLM(script);
  const sink = new InMemoryEventSink();
  const effects: string[] = [];
  const agent = new Agent({
    card: { name: 'assistant' },
    llm,
    eventSink: sink,
    instructions: 'You are terse.',
    ...options,
  });
  agent.registerTool({
    name: 'lookup',
    description: 'Looks a word up',
    parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
    capabilities: ['kb.read'],
    handler: ({ word }) => {
      effects.push(`lookup:${String(word)}`);
      return { word, meaning: `meaning of ${String(word)}` };
    },
  });
  agent.registerTool({
    name: 'delete_record',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    capabilities: ['records.delete'],
    handler: ({ id }) => {
      effects.push(`delete:${String(id)}`);
      return { deleted: id };
    },
  });
  const events = (): RunEvent[] => sink.toList();
  return { agent, llm, sink, effects, events };
}

const sinkTypes = (events: RunEvent[]) => events.map((event) => event.type);

describe('Agent with the built-in inference loop', () => {
  it('one model call: context.prepared, llm.call.started, llm.call.completed, then completed with the answer', async () => {
    const { agent, llm, events } = build([answer('Hello there.', { inputTokens: 12, outputTokens: 3 })]);
    const task = await agent.handleTask(createTask('Say hello'));
    expect(task.state).toBe('completed');
    expect(task.messages.at(-1)).toMatchObject({
      role: 'agent',
      parts: [{ type: 'text', content: 'Hello there.' }],
    });
    expect(sinkTypes(events())).toEqual([
      'task.status',
      'context.prepared',
      'llm.call.started',
      'llm.call.completed',
      'task.status',
      'task.status',
    ]);
    const [, prepared, started, completed] = events();
    const manifest = prepared.payload.manifest as unknown as JsonObject;
    expect(manifest).toMatchObject({
      run_id: task.metadata.run_context && (task.metadata.run_context as JsonObject).run_id,
      agent_name: 'assistant',
      provider: 'scripted',
      model: 'scripted-1',
    });
    expect(manifest.system_tokens as number).toBeGreaterThan(0);
    expect(manifest.user_tokens as number).toBeGreaterThan(0);
    expect(manifest.tool_prompt_tokens as number).toBeGreaterThan(0);
    expect(manifest.total_estimated_tokens).toBe(
      (manifest.system_tokens as number) +
        (manifest.tool_prompt_tokens as number) +
        (manifest.history_tokens as number) +
        (manifest.user_tokens as number),
    );
    expect(started.payload).toMatchObject({ provider: 'scripted', model: 'scripted-1', step: 1 });
    expect(completed.payload).toMatchObject({
      usage: { input_tokens: 12, output_tokens: 3 },
      finish_reason: 'stop',
      step: 1,
    });
    expect(typeof completed.payload.latency_ms).toBe('number');
    expect(events().map((event) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(llm.calls[0].messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(llm.calls[0].tools.map((tool) => tool.name)).toEqual(['lookup', 'delete_record']);
  });

  it('streams llm.stream chunks as they come and ends with one final status', async () => {
    const { agent } = build([answer('one two three')]);
    const events = await collect(agent.handleTaskStreaming(createTask('count'), undefined as never));
    const deltas = events
      .filter((event) => event.type === 'llm.stream')
      .map((event) => (event as { delta: string }).delta);
    expect(deltas.join('')).toBe('one two three');
    expect(deltas.length).toBe(3);
    const order = types(events).filter((type) =>
      ['context.prepared', 'llm.call.started', 'llm.stream', 'llm.call.completed'].includes(type),
    );
    expect(order).toEqual([
      'context.prepared',
      'llm.call.started',
      'llm.stream',
      'llm.stream',
      'llm.stream',
      'llm.call.completed',
    ]);
    expect(finalStatuses(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
    expect(
      events.every(
        (event) => event.task_id === events[0].task_id && (event as JsonObject).agent_name === 'assistant',
      ),
    ).toBe(true);
  });

  it('runs model-selected tools through the policy path and feeds results back', async () => {
    const { agent, llm, effects, events } = build([
      tools(call('lookup', { word: 'ok' })),
      answer('ok means fine'),
    ]);
    const task = await agent.handleTask(createTask('What is ok?'));
    expect(task.state).toBe('completed');
    expect(effects).toEqual(['lookup:ok']);
    expect(sinkTypes(events())).toEqual([
      'task.status',
      'context.prepared',
      'llm.call.started',
      'llm.call.completed',
      'action.requested',
      'action.policy',
      'action.started',
      'action.completed',
      'context.prepared',
      'llm.call.started',
      'llm.call.completed',
      'task.status',
      'task.status',
    ]);
    const started = events().find((event) => event.type === 'action.started') as RunEvent;
    expect(started.payload).toMatchObject({ step: 1, tool_call_id: expect.stringMatching(/^call_/) });
    expect(started.action_id).toBe((started.payload.action as JsonObject).action_id);
    const second = llm.calls[1].messages;
    expect(second.at(-2)).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'lookup' }] });
    expect(second.at(-1)).toMatchObject({
      role: 'tool',
      name: 'lookup',
      content: JSON.stringify({ word: 'ok', meaning: 'meaning of ok' }),
    });
    const history = events().filter((event) => event.type === 'context.prepared')[1].payload
      .manifest as unknown as JsonObject;
    expect(history.history_tokens as number).toBeGreaterThan(0);
  });

  it('feeds repairable tool errors back to the model (bad arguments, unknown tool)', async () => {
    const { agent, llm, effects } = build([
      tools(call('lookup', { wrong: 1 }), call('nope')),
      answer('sorry'),
    ]);
    const task = await agent.handleTask(createTask('x'));
    expect(task.state).toBe('completed');
    expect(effects).toEqual([]);
    const results = llm.calls[1].messages
      .filter((message) => message.role === 'tool')
      .map((message) => JSON.parse(message.content) as { error: { code: string } });
    expect(results.map((result) => result.error.code)).toEqual(['VALIDATION_FAILED', 'VALUE_ERROR']);
  });

  it('deny: the task fails with ACTION_DENIED, one task.error, and the tool never ran', async () => {
    const { agent, effects, events } = build([tools(call('delete_record', { id: 'r1' })), answer('done')], {
      policy: { 'records.*': 'deny' },
    });
    const task = await agent.handleTask(createTask('delete r1'));
    expect(task.state).toBe('failed');
    expect(errorOf(task).code).toBe('ACTION_DENIED');
    expect(effects).toEqual([]);
    expect(sinkTypes(events()).filter((type) => type === 'task.error')).toHaveLength(1);
    expect(sinkTypes(events()).slice(-5)).toEqual([
      'action.requested',
      'action.policy',
      'action.denied',
      'task.error',
      'task.status',
    ]);
  });

  it('approval granted inside the loop: the tool runs and the task completes', async () => {
    const { agent, effects, events } = build(
      [tools(call('delete_record', { id: 'r2' })), answer('deleted')],
      {
        policy: { 'records.delete': 'require_approval' },
        approvalHandler: (request) => approve(request, 'ops'),
      },
    );
    const task = await agent.handleTask(createTask('delete r2'));
    expect(task.state).toBe('completed');
    expect(effects).toEqual(['delete:r2']);
    expect(sinkTypes(events())).toEqual(expect.arrayContaining(['approval.required', 'approval.decided']));
  });

  it('no approval handler: the task fails with APPROVAL_REQUIRED carrying the serializable request', async () => {
    const { agent, effects } = build([tools(call('delete_record', { id: 'r3' }))], {
      policy: { 'records.delete': 'require_approval' },
    });
    const task = await agent.handleTask(createTask('delete r3'));
    expect(task.state).toBe('failed');
    const error = errorOf(task);
    expect(error.code).toBe('APPROVAL_REQUIRED');
    const request = (
      error.data as { request: { request_id: string; action: JsonObject; created_at: string } }
    ).request;
    expect(request.action).toMatchObject({ name: 'delete_record', capabilities: ['records.delete'] });
    expect(JSON.parse(JSON.stringify(task))).toEqual(task);
    expect(effects).toEqual([]);
  });

  it('stops a model that never finishes at the default step limit', async () => {
    const script = Array.from({ length: 5 }, () => tools(call('lookup', { word: 'again' })));
    const { agent } = build(script, { maxSteps: 3 });
    const task = await agent.handleTask(createTask('loop'));
    expect(task.state).toBe('failed');
    expect(errorOf(task)).toMatchObject({ code: 'BUDGET_EXCEEDED', data: { limit: 'max_steps', max: 3 } });
  });

  it('a subclass or execute option can drive the loop itself via run.infer', async () => {
    const { agent } = build([answer('42')], {
      execute: async (task, run) => {
        const result = await run.infer({ instructions: 'Answer with a number.', tools: [] });
        await run.addArtifact({
          id: 'a1',
          parts: [{ type: 'text', content: result.content }],
          metadata: {},
          created_at: new Date().toISOString(),
        });
        return task;
      },
    });
    const task = await agent.handleTask(createTask('question'));
    expect(task.state).toBe('completed');
    expect(task.artifacts[0].parts[0].content).toBe('42');
  });
});

describe('budget limits at their check points', () => {
  async function runWith(script: ScriptStep[], budget: JsonObject, extra: Partial<AgentOptions> = {}) {
    const built = build(script, { budget, ...extra });
    const task = await built.agent.handleTask(createTask('go'));
    return { ...built, task, list: sinkTypes(built.events()) };
  }
  const budgetEvents = (list: string[]) => list.filter((type) => type.startsWith('budget.'));
  const tail = (list: string[], from: string) => list.slice(list.lastIndexOf(from));

  it('max_steps: checked before each inference step begins', async () => {
    const { task, list, llm } = await runWith(
      [tools(call('lookup', { word: 'a' })), tools(call('lookup', { word: 'b' })), answer('never')],
      { max_steps: 2 },
    );
    expect(task.state).toBe('failed');
    expect(errorOf(task).data).toEqual({ limit: 'max_steps', used: 3, max: 2 });
    expect(budgetEvents(list)).toEqual(['budget.warning', 'budget.exceeded']);
    expect(llm.calls).toHaveLength(2);
    // Exceeded right after the last tool of step 2: no third manifest was prepared.
    expect(tail(list, 'action.completed')).toEqual([
      'action.completed',
      'budget.exceeded',
      'task.error',
      'task.status',
    ]);
    expect(list.filter((type) => type === 'context.prepared')).toHaveLength(2);
  });

  it('max_llm_calls: checked before a model call starts', async () => {
    const { task, list, llm } = await runWith([tools(call('lookup', { word: 'a' })), answer('never')], {
      max_llm_calls: 1,
    });
    expect(errorOf(task).data).toEqual({ limit: 'max_llm_calls', used: 2, max: 1 });
    expect(budgetEvents(list)).toEqual(['budget.warning', 'budget.exceeded']);
    expect(llm.calls).toHaveLength(1);
    expect(tail(list, 'context.prepared')).toEqual([
      'context.prepared',
      'budget.exceeded',
      'task.error',
      'task.status',
    ]);
  });

  it('max_tool_calls: checked before a model-selected tool executes', async () => {
    const { task, list, effects } = await runWith(
      [tools(call('lookup', { word: 'a' }), call('lookup', { word: 'b' }))],
      { max_tool_calls: 1 },
    );
    expect(errorOf(task).data).toEqual({ limit: 'max_tool_calls', used: 2, max: 1 });
    expect(effects).toEqual(['lookup:a']);
    expect(budgetEvents(list)).toEqual(['budget.warning', 'budget.exceeded']);
    expect(tail(list, 'action.policy')).toEqual([
      'action.policy',
      'budget.exceeded',
      'task.error',
      'task.status',
    ]);
  });

  it('max_input_tokens: checked before a model call with the ContextManifest estimate', async () => {
    const probe = await runWith([answer('x')], {});
    const estimate = (
      probe.events().find((event) => event.type === 'context.prepared')?.payload
        .manifest as unknown as JsonObject
    ).total_estimated_tokens as number;

    const atLimit = await runWith([answer('x')], { max_input_tokens: estimate });
    expect(atLimit.task.state).toBe('completed');
    expect(budgetEvents(atLimit.list)).toEqual(['budget.warning']);

    const over = await runWith([answer('x')], { max_input_tokens: estimate - 1 });
    expect(errorOf(over.task).data).toEqual({ limit: 'max_input_tokens', used: estimate, max: estimate - 1 });
    expect(over.llm.calls).toHaveLength(0);
    expect(tail(over.list, 'context.prepared')).toEqual([
      'context.prepared',
      'budget.exceeded',
      'task.error',
      'task.status',
    ]);
  });

  it('max_output_tokens: checked once provider usage (or a local estimate) exists', async () => {
    const { task, list, effects } = await runWith(
      [
        {
          content: 'long',
          toolCalls: [call('lookup', { word: 'x' })],
          usage: { inputTokens: 5, outputTokens: 9 },
        },
      ],
      {
        max_output_tokens: 8,
      },
    );
    expect(errorOf(task).data).toEqual({ limit: 'max_output_tokens', used: 9, max: 8 });
    // The tools the over-budget response selected never run.
    expect(effects).toEqual([]);
    expect(tail(list, 'llm.call.completed')).toEqual([
      'llm.call.completed',
      'budget.exceeded',
      'task.error',
      'task.status',
    ]);

    const warned = await runWith([answer('short', { inputTokens: 1, outputTokens: 8 })], {
      max_output_tokens: 10,
    });
    expect(warned.task.state).toBe('completed');
    expect(budgetEvents(warned.list)).toEqual(['budget.warning']);
  });

  it('max_runtime_seconds: checked on every budget check', async () => {
    const { task, list, llm } = await runWith(
      [answer('never')],
      { max_runtime_seconds: 0 },
      {
        execute: async (_task, run) => {
          await run.sleep(5);
          await run.infer();
        },
      },
    );
    expect(errorOf(task).data).toMatchObject({ limit: 'max_runtime_seconds', max: 0 });
    expect(llm.calls).toHaveLength(0);
    expect(list).toEqual(['task.status', 'budget.exceeded', 'task.error', 'task.status']);
  });

  it('a task budget can only tighten the agent budget', async () => {
    const { agent, llm } = build([tools(call('lookup', { word: 'a' })), answer('done')], {
      budget: { maxLlmCalls: 1 },
    });
    const loose = createTask('go', { metadata: { run_context: { budget: { max_llm_calls: 10 } } } });
    const task: Task = await agent.handleTask(loose);
    expect(errorOf(task).data).toMatchObject({ limit: 'max_llm_calls', max: 1 });
    expect(llm.calls).toHaveLength(1);
  });

  it('warning then exceeded appear in order on the stream too', async () => {
    const { agent } = build([tools(call('lookup', { word: 'a' })), answer('never')], {
      budget: { maxLlmCalls: 1 },
    });
    const events: TaskEvent[] = await collect(
      agent.handleTaskStreaming(createTask('go'), undefined as never),
    );
    const budget = events.filter((event) => event.type.startsWith('budget.'));
    expect(budget.map((event) => [event.type, (event as JsonObject).limit])).toEqual([
      ['budget.warning', 'max_llm_calls'],
      ['budget.exceeded', 'max_llm_calls'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'failed', final: true });
  });
});
