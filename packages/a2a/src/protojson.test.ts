import { type Task, ValidationError, createArtifact, createMessage, createTask } from '@agent/core';
import {
  contextIdOf,
  fromA2AArtifact,
  fromA2AMessage,
  fromA2APart,
  fromA2AState,
  fromA2ATask,
  readRequestObject,
  toA2AArtifact,
  toA2AMessage,
  toA2APart,
  toA2AState,
  toA2ATask,
} from './protojson.js';

function validationIssues(fn: () => unknown): { pointer: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError & { data: { errors: { pointer: string; message: string }[] } }).data
      .errors;
  }
  throw new Error('expected a ValidationError');
}

describe('states', () => {
  it('maps every native state to its A2A name and back', () => {
    for (const state of [
      'submitted',
      'working',
      'completed',
      'failed',
      'canceled',
      'input-required',
      'rejected',
      'auth-required',
    ] as const) {
      expect(fromA2AState(toA2AState(state))).toBe(state);
    }
    expect(toA2AState('input-required')).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('accepts proto numbers and 0.3 kebab names', () => {
    expect(fromA2AState(3)).toBe('completed');
    expect(fromA2AState(6)).toBe('input-required');
    expect(fromA2AState('auth-required')).toBe('auth-required');
    expect(fromA2AState('task_state_working')).toBe('working');
  });

  it('refuses UNSPECIFIED and unknown values with a pointer', () => {
    expect(validationIssues(() => fromA2AState(0, '/status/state'))).toEqual([
      { pointer: '/status/state', message: expect.any(String) },
    ]);
    expect(() => fromA2AState('TASK_STATE_UNSPECIFIED')).toThrow(ValidationError);
    expect(() => fromA2AState('unknown')).toThrow(ValidationError);
    expect(() => fromA2AState(9)).toThrow(ValidationError);
  });
});

describe('parts', () => {
  it('round-trips text, data, file and other native types', () => {
    const parts = [
      { type: 'text', content: 'hi' },
      { type: 'data', content: { a: [1, 2] } },
      {
        type: 'file',
        content: { url: 'https://x.test/f.pdf', media_type: 'application/pdf', filename: 'f.pdf' },
      },
      { type: 'file', content: { bytes: 'aGk=', media_type: 'text/plain' } },
      { type: 'image', content: { ref: 1 } },
      { type: 'marker' },
    ];
    const encoded = parts.map(toA2APart);
    expect(encoded).toEqual([
      { text: 'hi' },
      { data: { a: [1, 2] } },
      { url: 'https://x.test/f.pdf', mediaType: 'application/pdf', filename: 'f.pdf' },
      { raw: 'aGk=', mediaType: 'text/plain' },
      { data: { ref: 1 }, metadata: { native_type: 'image' } },
      { data: null, metadata: { native_type: 'marker' } },
    ]);
    expect(encoded.map((part, index) => fromA2APart(part, `/parts/${index}`))).toEqual(parts);
  });

  it('reads snake_case and 0.3 names', () => {
    expect(fromA2APart({ url: 'u', media_type: 'a/b' }, '')).toEqual({
      type: 'file',
      content: { url: 'u', media_type: 'a/b' },
    });
    expect(fromA2APart({ raw: 'eA==', mimeType: 'a/b' }, '')).toEqual({
      type: 'file',
      content: { bytes: 'eA==', media_type: 'a/b' },
    });
  });

  it('drops part metadata other than native_type', () => {
    expect(fromA2APart({ text: 'x', metadata: { k: 1 } }, '')).toEqual({ type: 'text', content: 'x' });
  });

  it('needs exactly one member', () => {
    expect(validationIssues(() => fromA2APart({ text: 'a', url: 'b' }, '/message/parts/0'))).toEqual([
      { pointer: '/message/parts/0', message: 'must have exactly one of text, raw, url, data' },
    ]);
    expect(validationIssues(() => fromA2APart({}, '/p'))[0]!.pointer).toBe('/p');
    expect(validationIssues(() => fromA2APart({ text: 5 }, '/p'))).toEqual([
      { pointer: '/p/text', message: 'must be a string' },
    ]);
    expect(validationIssues(() => fromA2APart('x', '/p'))).toEqual([
      { pointer: '/p', message: 'must be an object' },
    ]);
  });
});

describe('messages', () => {
  it('round-trips with ids, timestamp and the system role', () => {
    const message = createMessage('hello', { role: 'system', timestamp: '2026-01-02T03:04:05.000Z' });
    const encoded = toA2AMessage(message, { taskId: 't1', contextId: 'c1' });
    expect(encoded).toEqual({
      messageId: message.id,
      role: 'ROLE_AGENT',
      parts: [{ text: 'hello' }],
      contextId: 'c1',
      taskId: 't1',
      metadata: { timestamp: '2026-01-02T03:04:05.000Z', native_role: 'system' },
    });
    expect(fromA2AMessage(encoded)).toEqual({ message, taskId: 't1', contextId: 'c1' });
  });

  it('omits absent ids and normalizes offsets to Z', () => {
    const message = createMessage('x', { timestamp: '2026-01-02T05:04:05+02:00' });
    expect(toA2AMessage(message)).toEqual({
      messageId: message.id,
      role: 'ROLE_USER',
      parts: [{ text: 'x' }],
      metadata: { timestamp: '2026-01-02T03:04:05.000Z' },
    });
  });

  it('reads snake_case fields and numeric roles, returns foreign metadata', () => {
    const decoded = fromA2AMessage({
      message_id: 'm1',
      role: 1,
      parts: [{ text: 'a' }],
      context_id: 'c',
      task_id: 't',
      metadata: { trace: 'x' },
      unknownField: true,
    });
    expect(decoded.message).toMatchObject({
      id: 'm1',
      role: 'user',
      parts: [{ type: 'text', content: 'a' }],
    });
    expect(decoded).toMatchObject({ contextId: 'c', taskId: 't', metadata: { trace: 'x' } });
    expect(fromA2AMessage({ messageId: 'm', role: 2, parts: [{ data: 1 }] }).message.role).toBe('agent');
  });

  it('lists every problem with a pointer', () => {
    expect(
      validationIssues(() => fromA2AMessage({ role: 'ROLE_X', parts: [{ text: 1 }] }, '/message')),
    ).toEqual([
      { pointer: '/message/messageId', message: 'is required' },
      { pointer: '/message/role', message: 'must be ROLE_USER or ROLE_AGENT' },
      { pointer: '/message/parts/0/text', message: 'must be a string' },
    ]);
    expect(
      validationIssues(() => fromA2AMessage({ messageId: 'm', role: 'ROLE_USER', parts: [] }, '/message')),
    ).toEqual([{ pointer: '/message/parts', message: 'must have at least one part' }]);
  });
});

describe('artifacts', () => {
  it('round-trips, native-only fields in metadata', () => {
    const artifact = {
      ...createArtifact([{ type: 'text', content: 'r' }], { name: 'result', metadata: { k: 'v' } }),
      kind: 'preview',
      action_id: 'a1',
    };
    const encoded = toA2AArtifact(artifact);
    expect(encoded).toEqual({
      artifactId: artifact.id,
      name: 'result',
      parts: [{ text: 'r' }],
      metadata: { k: 'v', created_at: artifact.created_at, native_kind: 'preview', native_action_id: 'a1' },
    });
    expect(fromA2AArtifact(encoded)).toEqual(artifact);
  });

  it('reads snake_case and needs an artifactId', () => {
    expect(fromA2AArtifact({ artifact_id: 'a', parts: [] }).id).toBe('a');
    expect(validationIssues(() => fromA2AArtifact({ parts: [] }, '/artifact'))).toEqual([
      { pointer: '/artifact/artifactId', message: 'is required' },
    ]);
  });
});

describe('tasks', () => {
  function finishedTask(): Task {
    const task = createTask('question', { metadata: { session_id: 'ctx-1', custom: 1 } });
    task.messages.push(createMessage('answer', { role: 'agent' }));
    task.artifacts.push(createArtifact([{ type: 'text', content: 'a' }]));
    task.state = 'completed';
    return task;
  }

  it('contextIdOf prefers run_context.session_id, then session_id, then the id', () => {
    const task = createTask('x');
    expect(contextIdOf(task)).toBe(task.id);
    task.metadata.session_id = 's';
    expect(contextIdOf(task)).toBe('s');
    task.metadata.run_context = { session_id: 'r' };
    expect(contextIdOf(task)).toBe('r');
  });

  it('encodes with status message, history, artifacts and metadata minus reserved keys', () => {
    const task = finishedTask();
    task.metadata.run_context = { session_id: 'ctx-1' };
    const encoded = toA2ATask(task, { timestamp: '2026-01-01T00:00:00.000Z' });
    expect(encoded.id).toBe(task.id);
    expect(encoded.contextId).toBe('ctx-1');
    expect(encoded.status.state).toBe('TASK_STATE_COMPLETED');
    expect(encoded.status.timestamp).toBe('2026-01-01T00:00:00.000Z');
    expect(encoded.status.message?.messageId).toBe(task.messages[1]!.id);
    expect(encoded.history).toHaveLength(2);
    expect(encoded.history![0]).toMatchObject({ taskId: task.id, contextId: 'ctx-1', role: 'ROLE_USER' });
    expect(encoded.artifacts).toHaveLength(1);
    expect(encoded.metadata).toEqual({ custom: 1 });
  });

  it('applies historyLength and includeArtifacts, omitting defaults', () => {
    const task = finishedTask();
    expect(toA2ATask(task, { historyLength: 0 })).not.toHaveProperty('history');
    expect(toA2ATask(task, { historyLength: 1 }).history!.map((m) => m.messageId)).toEqual([
      task.messages[1]!.id,
    ]);
    expect(toA2ATask(task, { includeArtifacts: false })).not.toHaveProperty('artifacts');
    const bare = createTask({ id: 't' });
    const encoded = toA2ATask(bare);
    expect(Object.keys(encoded).sort()).toEqual(['contextId', 'id', 'status']);
    expect(encoded.status).not.toHaveProperty('message');
    expect(encoded.status.timestamp).toMatch(/Z$/);
  });

  it('leaves status.message out while running and when the user spoke last', () => {
    const task = createTask('q');
    task.state = 'working';
    expect(toA2ATask(task).status).not.toHaveProperty('message');
    task.state = 'failed';
    expect(toA2ATask(task).status).not.toHaveProperty('message');
  });

  it('round-trips through fromA2ATask', () => {
    const task = finishedTask();
    const decoded = fromA2ATask(JSON.parse(JSON.stringify(toA2ATask(task))));
    expect(decoded).toMatchObject({
      id: task.id,
      state: 'completed',
      messages: task.messages,
      artifacts: task.artifacts,
      metadata: { custom: 1, session_id: 'ctx-1' },
    });
  });

  it('tolerates snake_case, numeric states, a status message outside history and empty parts', () => {
    const decoded = fromA2ATask({
      id: 't',
      context_id: 'c',
      status: { state: 6, message: { message_id: 'm2', role: 'ROLE_AGENT', parts: [{ text: 'more?' }] } },
      history: [{ messageId: 'm1', role: 'ROLE_USER', parts: [] }],
      extra: 'ignored',
    });
    expect(decoded.state).toBe('input-required');
    expect(decoded.metadata).toEqual({ session_id: 'c' });
    expect(decoded.messages.map((m) => m.id)).toEqual(['m1', 'm2']);
  });

  it('refuses what is not a task', () => {
    expect(validationIssues(() => fromA2ATask({ status: {} }))).toEqual([
      { pointer: '/id', message: 'is required' },
      { pointer: '/status/state', message: 'must be a known TaskState' },
    ]);
    expect(() => fromA2ATask([])).toThrow(ValidationError);
  });
});

describe('readRequestObject', () => {
  it('reads snake_case keys as camelCase, camelCase winning', () => {
    expect(readRequestObject({ history_length: 2, page_size: 3, pageSize: 4, id: 'x' })).toEqual({
      historyLength: 2,
      pageSize: 4,
      id: 'x',
    });
  });

  it('refuses non-objects with the pointer', () => {
    expect(validationIssues(() => readRequestObject([], '/params'))).toEqual([
      { pointer: '/params', message: 'must be an object' },
    ]);
  });
});
