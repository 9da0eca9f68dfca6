import {
  createArtifact,
  createMessage,
  createTask,
  dataPart,
  textPart,
  validateAgentCard,
  validateArtifact,
  validateMessage,
  validateTask,
  validateTaskEvent,
  ValidationError,
  type AgentCard,
  type Task,
  type TaskEvent,
} from './index.js';

function fullTask(): Task {
  const task = createTask('hello', { metadata: { session_id: 's1', nested: { a: [1, 2, null] } } });
  task.artifacts.push(
    createArtifact('result', {
      kind: 'preview',
      name: 'r',
      uri: 'file:///x',
      media_type: 'text/plain',
      action_id: 'a1',
    }),
  );
  task.messages.push(createMessage([textPart('hi'), dataPart({ k: 1 })], { role: 'agent' }));
  return task;
}

function failure(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

function pointers(error: ValidationError): string[] {
  return (error.data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer);
}

describe('wire types round-trip JSON unchanged', () => {
  it('Task', () => {
    const task = fullTask();
    const copy = JSON.parse(JSON.stringify(task));
    expect(validateTask(copy)).toEqual(task);
    expect(JSON.stringify(validateTask(copy))).toBe(JSON.stringify(task));
  });
  it('Message, Part, Artifact', () => {
    const message = createMessage([textPart('a'), dataPart([1, 'two'])], { role: 'system' });
    expect(validateMessage(JSON.parse(JSON.stringify(message)))).toEqual(message);
    const artifact = createArtifact(dataPart({ x: true }), { metadata: { m: 1 } });
    expect(validateArtifact(JSON.parse(JSON.stringify(artifact)))).toEqual(artifact);
  });
  it('AgentCard with securitySchemes', () => {
    const card: AgentCard = {
      name: 'echo',
      description: 'echoes',
      url: 'http://127.0.0.1:8080',
      version: '1.0.0',
      capabilities: { streaming: true, transports: ['http'] },
      skills: [{ id: 'echo', name: 'Echo', tags: ['demo'] }],
      securitySchemes: { apiKey: { type: 'apiKey', scheme: null, description: 'key', metadata: {} } },
    };
    expect(validateAgentCard(JSON.parse(JSON.stringify(card)))).toEqual(card);
  });
  it('every TaskEvent variant', () => {
    const task = fullTask();
    const events: TaskEvent[] = [
      { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: task.created_at },
      {
        type: 'task.status',
        task_id: task.id,
        state: 'completed',
        final: true,
        timestamp: task.created_at,
        task,
      },
      {
        type: 'task.artifact',
        task_id: task.id,
        artifact: task.artifacts[0]!,
        append: false,
        last_chunk: true,
        timestamp: task.created_at,
      },
      { type: 'llm.stream', task_id: task.id, delta: 'tok', timestamp: task.created_at },
      {
        type: 'budget.warning',
        task_id: task.id,
        timestamp: task.created_at,
        limit: 'max_steps',
        used: 8,
        max: 10,
      },
    ];
    for (const event of events) expect(validateTaskEvent(JSON.parse(JSON.stringify(event)))).toEqual(event);
  });
});

describe('validation failures name the failing pointer', () => {
  it('a task missing id', () => {
    const { id: _id, ...rest } = fullTask();
    expect(pointers(failure(() => validateTask(rest)))).toContain('/id');
  });
  it('an unknown state', () => {
    const error = failure(() => validateTask({ ...fullTask(), state: 'sleeping' }));
    expect(pointers(error)).toEqual(['/state']);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.message).toContain('/state');
  });
  it('a wrongly typed state', () => {
    expect(pointers(failure(() => validateTask({ ...fullTask(), state: 3 })))).toEqual(['/state']);
  });
  it('a part missing type', () => {
    const task = fullTask();
    const broken = JSON.parse(JSON.stringify(task));
    delete broken.messages[1].parts[0].type;
    expect(pointers(failure(() => validateTask(broken)))).toContain('/messages/1/parts/0/type');
  });
  it('a non-object metadata', () => {
    expect(pointers(failure(() => validateTask({ ...fullTask(), metadata: 'x' })))).toEqual(['/metadata']);
    expect(pointers(failure(() => validateTask({ ...fullTask(), metadata: [] })))).toEqual(['/metadata']);
  });
  it('lists every failure at once', () => {
    const error = failure(() => validateTask({ id: '', state: 'nope', metadata: 1, messages: [{}] }));
    expect(pointers(error)).toEqual(
      expect.arrayContaining([
        '/id',
        '/state',
        '/metadata',
        '/messages/0/id',
        '/messages/0/role',
        '/messages/0/parts',
      ]),
    );
  });
  it('a non-object body', () => {
    expect(pointers(failure(() => validateTask([1])))).toEqual(['/']);
    expect(pointers(failure(() => validateTask(null)))).toEqual(['/']);
  });
  it('a text part whose content is not a string', () => {
    const task = createTask({ messages: [createMessage([{ type: 'text', content: 5 }])] });
    expect(pointers(failure(() => validateTask(task)))).toContain('/messages/0/parts/0/content');
  });
  it('a bad timestamp', () => {
    expect(pointers(failure(() => validateTask({ ...fullTask(), created_at: 'yesterday' })))).toEqual([
      '/created_at',
    ]);
  });
});

describe('validateTask defaults and strict mode', () => {
  it('fills defaults without mutating the input', () => {
    const input = { id: 't1' };
    const task = validateTask(input);
    expect(task).toMatchObject({ id: 't1', state: 'submitted', messages: [], artifacts: [], metadata: {} });
    expect(Date.parse(task.created_at)).not.toBeNaN();
    expect(input).toEqual({ id: 't1' });
  });
  it('strict rejects unknown fields but not free-form metadata', () => {
    const task = { ...fullTask(), extra: 1 };
    expect(validateTask(task).id).toBe(task.id);
    expect(pointers(failure(() => validateTask(task, { strict: true })))).toEqual(['/extra']);
    expect(
      validateTask({ ...fullTask(), metadata: { anything: { goes: 1 } } }, { strict: true }),
    ).toBeDefined();
  });
});
