import {
  createArtifact,
  createMessage,
  createTask,
  dataPart,
  textPart,
  TASK_STATES,
  RUNTIME_EVENT_TYPES,
  ValidationError,
  ValueError,
  InvalidRequestError,
  type AgentCard,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import {
  decodeAgentCard,
  decodeArtifact,
  decodeInvokeRequest,
  decodeInvokeResponse,
  decodeMessage,
  decodePart,
  decodeSubscribeRequest,
  decodeTask,
  decodeTaskEvent,
  encodeAgentCard,
  encodeArtifact,
  encodeInvokeRequest,
  encodeInvokeResponse,
  encodeMessage,
  encodePart,
  encodeSubscribeRequest,
  encodeTask,
  encodeTaskEvent,
} from './codec.js';
import { readMessage, type AgentMessageName } from './codec-reader.js';
import * as pb from './gen/agent/v1/agent.js';

const READER_NAMES = new Map<unknown, AgentMessageName>([
  [pb.AgentCard, 'AgentCard'],
  [pb.Artifact, 'Artifact'],
  [pb.InvokeRequest, 'InvokeRequest'],
  [pb.InvokeResponse, 'InvokeResponse'],
  [pb.Message, 'Message'],
  [pb.Part, 'Part'],
  [pb.SubscribeRequest, 'SubscribeRequest'],
  [pb.Task, 'Task'],
  [pb.TaskEvent, 'TaskEvent'],
]);

/**
 * Encodes to proto bytes and back, so every test crosses the real wire format; the bounded reader
 * (what the server reads requests and the client answers with) must decode the same bytes to the
 * same message as the generated decoder.
 */
function viaWire<T>(
  fns: { encode(message: T): { finish(): Uint8Array }; decode(input: Uint8Array): T },
  message: T,
): T {
  const bytes = fns.encode(message).finish();
  const decoded = fns.decode(bytes);
  const name = READER_NAMES.get(fns);
  if (name === undefined) throw new Error('a message the bounded reader does not know');
  expect(readMessage(name, bytes)).toEqual(decoded);
  return decoded;
}

function richTask(state: Task['state'] = 'working'): Task {
  const task = createTask({
    id: 'task-1',
    metadata: {
      run_context: { run_id: 'r1', agent_chain: ['a', 'b'], budget: { max_steps: 3 } },
      session_id: 's',
      n: 1.5,
      flag: false,
      none: null,
    },
  });
  task.state = state;
  task.messages.push(
    createMessage(
      [
        textPart('hello'),
        dataPart({ nested: [1, 'two', { three: true }], empty: {} }),
        { type: 'image' },
        dataPart(null),
      ],
      {
        role: 'user',
      },
    ),
    createMessage('reply', { role: 'agent' }),
    createMessage('rules', { role: 'system' }),
  );
  task.artifacts.push(
    createArtifact([textPart('out')], {
      metadata: { k: 'v' },
      kind: 'preview',
      name: 'diff',
      uri: 'file:///tmp/x',
      media_type: 'text/plain',
      action_id: 'act-1',
    }),
    createArtifact('plain'),
  );
  return task;
}

describe('codec: wire types', () => {
  it('round-trips a Part for every kind of JSON content, and a part without content', () => {
    for (const part of [
      textPart('x'),
      dataPart({ a: [1, null, 'b'] }),
      dataPart(null),
      dataPart(0),
      dataPart(false),
      dataPart([]),
      { type: 'blob' },
    ]) {
      expect(decodePart(viaWire(pb.Part, encodePart(part)))).toEqual(part);
    }
  });

  it('round-trips Messages with every role', () => {
    for (const role of ['user', 'agent', 'system'] as const) {
      const message = createMessage([textPart('hi'), dataPart({ x: 1 })], { role });
      expect(decodeMessage(viaWire(pb.Message, encodeMessage(message)))).toEqual(message);
    }
  });

  it('round-trips Artifacts with and without the runtime descriptor fields', () => {
    const task = richTask();
    for (const artifact of task.artifacts) {
      expect(decodeArtifact(viaWire(pb.Artifact, encodeArtifact(artifact)))).toEqual(artifact);
    }
  });

  it('round-trips a Task in every state', () => {
    for (const state of TASK_STATES) {
      const task = richTask(state);
      expect(decodeTask(viaWire(pb.Task, encodeTask(task)))).toEqual(task);
    }
  });

  it('round-trips AgentCards with and without securitySchemes, keeping other fields', () => {
    const plain: AgentCard = { name: 'a', description: 'd', url: 'grpc://127.0.0.1:1' };
    const full: AgentCard = {
      ...plain,
      version: '1.2.3',
      capabilities: { streaming: true, transports: ['grpc'] },
      skills: [],
      metadata: { owner: 'me' },
      securitySchemes: {
        apiKey: { type: 'apiKey', scheme: null, description: 'keys', metadata: {} },
        http: { type: 'http', scheme: 'bearer', description: 'jwt', metadata: { algorithms: ['HS256'] } },
      },
    };
    const decodedPlain = decodeAgentCard(viaWire(pb.AgentCard, encodeAgentCard(plain)));
    expect(decodedPlain).toEqual(plain);
    expect('securitySchemes' in decodedPlain).toBe(false);
    expect(decodeAgentCard(viaWire(pb.AgentCard, encodeAgentCard(full)))).toEqual(full);
  });

  it('normalizes values the way JSON would: Dates, undefined, non-finite numbers', () => {
    const task = createTask({
      id: 't',
      metadata: {
        when: new Date('2026-01-02T03:04:05.000Z'),
        gone: undefined,
        nan: Number.NaN,
        list: [undefined, 1],
      },
    });
    expect(decodeTask(viaWire(pb.Task, encodeTask(task))).metadata).toEqual({
      when: '2026-01-02T03:04:05.000Z',
      nan: null,
      list: [null, 1],
    });
  });

  it('rejects values JSON cannot carry with a ValueError', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeTask(createTask({ metadata: { big: 10n } }))).toThrow(ValueError);
    expect(() => encodeTask(createTask({ metadata: cyclic }))).toThrow(/cycle/);
  });

  it('refuses a value nested past the JSON depth limit before walking it, in the words of the server', () => {
    const nested = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 1 };
      for (let i = 1; i < levels; i++) value = { a: value };
      return value;
    };
    // metadata is depth 2: 62 levels inside it reach 64.
    const deepest = createTask({ metadata: { x: nested(62) } });
    // (Past the generated decoder's own recursion limit of 100 messages: only the bounded reader reads it.)
    const bytes = pb.Task.encode(encodeTask(deepest)).finish();
    expect(decodeTask(readMessage('Task', bytes)).metadata).toEqual(deepest.metadata);
    for (const levels of [63, 10_000]) {
      const task = createTask({ metadata: { x: nested(levels) } });
      expect(() => encodeTask(task)).toThrow(InvalidRequestError);
      expect(() => encodeTask(task)).toThrow('Invalid request: JSON nesting depth exceeds 64');
    }
    // A part's content sits at depth 6.
    const content = createTask('hi');
    content.messages[0]!.parts.push(dataPart(nested(59)));
    expect(() => encodeTask(content)).not.toThrow();
    content.messages[0]!.parts.push(dataPart(nested(60)));
    expect(() => encodeTask(content)).toThrow(InvalidRequestError);
  });

  it('keeps a __proto__ key an own property while normalizing', () => {
    const metadata = JSON.parse('{"__proto__":{"polluted":true},"k":1}') as Record<string, unknown>;
    const encoded = encodeTask(createTask({ metadata }));
    expect(Object.getOwnPropertyDescriptor(encoded.metadata, '__proto__')?.value).toEqual({ polluted: true });
    expect(Object.getPrototypeOf(encoded.metadata)).toBe(Object.prototype);
  });

  it('rejects unknown enum values with a ValidationError that points at the field', () => {
    const encoded = encodeTask(richTask());
    expect(() => decodeTask({ ...encoded, state: pb.TaskState.TASK_STATE_UNSPECIFIED })).toThrow(
      ValidationError,
    );
    const badRole = { ...encoded, messages: [{ ...encoded.messages[0]!, role: 42 as pb.Role }] };
    try {
      decodeTask(badRole);
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).data).toEqual({
        errors: [{ pointer: '/messages/0/role', message: 'has unknown enum value 42' }],
      });
    }
  });
});

describe('codec: TaskEvents', () => {
  const task = richTask('completed');
  const timestamp = '2026-11-21T10:00:00.000Z';
  const events: TaskEvent[] = [
    { type: 'task.status', task_id: 'task-1', state: 'working', final: false, timestamp },
    {
      type: 'task.status',
      task_id: 'task-1',
      state: 'working',
      final: false,
      timestamp,
      message: createMessage('thinking', { role: 'agent' }),
    },
    { type: 'task.status', task_id: 'task-1', state: 'completed', final: true, timestamp, task },
    {
      type: 'task.artifact',
      task_id: 'task-1',
      artifact: task.artifacts[0]!,
      append: true,
      last_chunk: false,
      timestamp,
    },
    {
      type: 'task.artifact',
      task_id: 'task-1',
      artifact: task.artifacts[1]!,
      append: false,
      last_chunk: true,
      timestamp,
    },
    { type: 'llm.stream', task_id: 'task-1', delta: 'tok', timestamp },
    // Fields the runtime adds to any event travel too.
    {
      type: 'llm.stream',
      task_id: 'task-1',
      delta: '',
      timestamp,
      run_id: 'r1',
      agent_name: 'demo',
    } as TaskEvent,
    ...RUNTIME_EVENT_TYPES.map((type, index) => ({
      type,
      task_id: 'task-1',
      timestamp,
      step: index,
      payload: { nested: [true, null] },
      run_id: 'r1',
    })),
  ];

  it.each(events.map((event) => [event.type, event] as const))('round-trips %s', (_type, event) => {
    expect(decodeTaskEvent(viaWire(pb.TaskEvent, encodeTaskEvent(event)))).toEqual(event);
  });

  it.each(events.map((event, index) => [event.type, { ...event, sequence: index + 1 }] as const))(
    'carries the sequence of %s',
    (_type, event) => {
      const encoded = viaWire(pb.TaskEvent, encodeTaskEvent(event as TaskEvent));
      expect(encoded.sequence).toBe(event.sequence);
      expect(encoded.extra?.sequence).toBeUndefined();
      if (encoded.event?.$case === 'runtime') expect(encoded.event.value?.sequence).toBeUndefined();
      expect(decodeTaskEvent(encoded)).toEqual(event);
    },
  );

  it('leaves sequence out of an event without one (0 on the wire)', () => {
    const encoded = viaWire(pb.TaskEvent, encodeTaskEvent(events[0]!));
    expect(encoded.sequence).toBe(0);
    expect('sequence' in decodeTaskEvent(encoded)).toBe(false);
  });

  it('rejects an event whose oneof does not match its type', () => {
    const encoded = encodeTaskEvent(events[5]!);
    expect(() => decodeTaskEvent({ ...encoded, type: 'task.status' })).toThrow(ValidationError);
    expect(() => decodeTaskEvent({ ...encoded, event: undefined })).toThrow(ValidationError);
  });
});

describe('codec: Invoke', () => {
  const task = richTask('submitted');

  it('round-trips every operation', () => {
    const cases = [
      [encodeInvokeRequest('send_task', task), { operation: 'send_task', data: task }],
      [
        encodeInvokeRequest('cancel_task', { task_id: 't1', reason: 'user' }),
        { operation: 'cancel_task', data: { task_id: 't1', reason: 'user' } },
      ],
      [
        encodeInvokeRequest('cancel_task', { id: 't2' }),
        { operation: 'cancel_task', data: { task_id: 't2' } },
      ],
      [encodeInvokeRequest('get_card', undefined), { operation: 'get_card', data: {} }],
      [
        encodeInvokeRequest('get_task', { task_id: 't3' }),
        { operation: 'get_task', data: { task_id: 't3' } },
      ],
      [
        encodeInvokeRequest('get_task', { task_id: 't4', history_length: 0 }),
        { operation: 'get_task', data: { task_id: 't4', history_length: 0 } },
      ],
      // Decimal strings, as a query string carries numbers, become numbers.
      [
        encodeInvokeRequest('get_task', { id: 't5', history_length: '7' }),
        { operation: 'get_task', data: { task_id: 't5', history_length: 7 } },
      ],
      [encodeInvokeRequest('list_tasks', undefined), { operation: 'list_tasks', data: {} }],
      [
        encodeInvokeRequest('list_tasks', {
          session_id: 's1',
          state: 'input-required',
          page_size: 0,
          page_token: 'tok',
        }),
        {
          operation: 'list_tasks',
          data: { session_id: 's1', state: 'input-required', page_size: 0, page_token: 'tok' },
        },
      ],
    ] as const;
    for (const [request, expected] of cases) {
      expect(decodeInvokeRequest(viaWire(pb.InvokeRequest, request))).toEqual(expected);
    }
  });

  it('keeps an empty cancel reason distinct from none', () => {
    expect(
      decodeInvokeRequest(
        viaWire(pb.InvokeRequest, encodeInvokeRequest('cancel_task', { task_id: 't', reason: '' })),
      ),
    ).toEqual({
      operation: 'cancel_task',
      data: { task_id: 't', reason: '' },
    });
  });

  it('round-trips every state of a list filter', () => {
    for (const state of TASK_STATES) {
      expect(
        decodeInvokeRequest(viaWire(pb.InvokeRequest, encodeInvokeRequest('list_tasks', { state }))),
      ).toEqual({ operation: 'list_tasks', data: { state } });
    }
  });

  it('sends a missing task id as "" for the server to refuse, and leaves what the proto can carry to it', () => {
    expect(decodeInvokeRequest(viaWire(pb.InvokeRequest, encodeInvokeRequest('get_task', {})))).toEqual({
      operation: 'get_task',
      data: { task_id: '' },
    });
    expect(
      decodeInvokeRequest(viaWire(pb.InvokeRequest, encodeInvokeRequest('list_tasks', { page_size: 101 }))),
    ).toEqual({ operation: 'list_tasks', data: { page_size: 101 } });
  });

  it('refuses on the client what the proto cannot carry, in the words of the server', () => {
    const cases: [() => unknown, string, string][] = [
      [
        () => encodeInvokeRequest('get_task', { task_id: 't', history_length: -1 }),
        'get_task',
        '/history_length',
      ],
      [
        () => encodeInvokeRequest('get_task', { task_id: 't', history_length: 1.5 }),
        'get_task',
        '/history_length',
      ],
      [
        () => encodeInvokeRequest('get_task', { task_id: 't', history_length: 2 ** 32 }),
        'get_task',
        '/history_length',
      ],
      [() => encodeInvokeRequest('list_tasks', { page_size: 'ten' }), 'list_tasks', '/page_size'],
      [() => encodeInvokeRequest('list_tasks', { state: 'sleeping' }), 'list_tasks', '/state'],
      [() => encodeInvokeRequest('list_tasks', { session_id: 5 }), 'list_tasks', '/session_id'],
      [() => encodeInvokeRequest('list_tasks', [1]), 'list_tasks', '/'],
      [() => encodeSubscribeRequest({ task_id: 't', after: -1 }), 'subscribe_task', '/after'],
    ];
    for (const [work, operation, pointer] of cases) {
      let error: unknown;
      try {
        work();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(`Invalid ${operation} request: ${pointer} `);
      expect((error as ValidationError).data).toEqual({ errors: [{ pointer, message: expect.any(String) }] });
    }
  });

  it('refuses TASK_STATE_UNSPECIFIED in a list filter, pointing at the field', () => {
    const request: pb.InvokeRequest = {
      operation: { $case: 'listTasks', value: { state: pb.TaskState.TASK_STATE_UNSPECIFIED } },
    };
    try {
      decodeInvokeRequest(viaWire(pb.InvokeRequest, request));
      throw new Error('expected a ValidationError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).data).toEqual({
        errors: [{ pointer: '/list_tasks/state', message: 'has unknown enum value 0' }],
      });
    }
  });

  it('round-trips a SubscribeRequest, after defaulting to 0', () => {
    for (const [data, expected] of [
      [
        { task_id: 't', after: 3 },
        { task_id: 't', after: 3 },
      ],
      [{ task_id: 't' }, { task_id: 't', after: 0 }],
      [
        { id: 't', after: '12' },
        { task_id: 't', after: 12 },
      ],
    ] as const) {
      expect(decodeSubscribeRequest(viaWire(pb.SubscribeRequest, encodeSubscribeRequest(data)))).toEqual(
        expected,
      );
    }
  });

  it('round-trips a TaskList, first and last page', () => {
    const pages: TaskList[] = [
      { tasks: [richTask('completed'), richTask('failed')], next_page_token: 'next' },
      { tasks: [], next_page_token: '' },
    ];
    for (const page of pages) {
      expect(
        decodeInvokeResponse(viaWire(pb.InvokeResponse, encodeInvokeResponse('list_tasks', page))),
      ).toEqual(page);
    }
  });

  it('round-trips the Task and AgentCard response kinds', () => {
    const card: AgentCard = { name: 'n', description: 'd', url: 'u' };
    expect(decodeInvokeResponse(viaWire(pb.InvokeResponse, encodeInvokeResponse('send_task', task)))).toEqual(
      task,
    );
    expect(decodeInvokeResponse(viaWire(pb.InvokeResponse, encodeInvokeResponse('get_card', card)))).toEqual(
      card,
    );
  });

  it('rejects requests without an operation or task, and responses without a result', () => {
    expect(() => decodeInvokeRequest({})).toThrow(InvalidRequestError);
    expect(() => decodeInvokeRequest({ operation: { $case: 'sendTask', value: {} } })).toThrow(
      ValidationError,
    );
    expect(() => decodeInvokeResponse({})).toThrow(ValidationError);
    expect(() => encodeInvokeRequest('cancel_task', {})).toThrow(ValidationError);
  });
});
