import { CLIENT_OPERATIONS, createTask, type Task } from '@agent/core';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { encodeInvokeRequest } from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { ERROR_CODE_METADATA, ERROR_DATA_METADATA } from './grpc-errors.js';
import { Harness } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

const identity = (value: Buffer): Buffer => value;

type Answer = { ok: true; response: Buffer } | { ok: false; error: ServiceError };

/** Sends `body` as the request message as it is, through a pass-through serializer. */
function sendRaw(
  url: string,
  body: Uint8Array,
  method: 'Invoke' | 'Stream' | 'Subscribe' = 'Invoke',
): Promise<Answer> {
  const client = new Client(url.replace('grpc://', ''), credentials.createInsecure());
  const path = `/agent.v1.AgentService/${method}`;
  return new Promise<Answer>((resolve) => {
    const settle = (answer: Answer): void => {
      client.close();
      resolve(answer);
    };
    if (method === 'Invoke') {
      client.makeUnaryRequest(
        path,
        identity,
        identity,
        Buffer.from(body),
        new Metadata(),
        (error, response) => settle(error ? { ok: false, error } : { ok: true, response: response! }),
      );
    } else {
      const call = client.makeServerStreamRequest(
        path,
        identity,
        identity,
        Buffer.from(body),
        new Metadata(),
      );
      call.on('data', () => undefined);
      call.on('error', (error: ServiceError) => settle({ ok: false, error }));
      call.on('end', () => settle({ ok: true, response: Buffer.alloc(0) }));
    }
  });
}

async function refusal(
  url: string,
  body: Uint8Array,
  method?: 'Invoke' | 'Stream' | 'Subscribe',
): Promise<ServiceError> {
  const answer = await sendRaw(url, body, method);
  if (answer.ok) throw new Error('the malformed request was answered as a valid one');
  return answer.error;
}

/** What no answer may carry: an engine's message, a stack frame, a file path. */
const ENGINE_WORDING =
  /Maximum call stack|RangeError|TypeError|\n\s+at |\.[cm]?[jt]s:\d|node_modules|premature EOF|invalid varint|illegal tag/;

function expectInvalid(error: ServiceError, code: string, details: RegExp): void {
  expect(error.code).toBe(status.INVALID_ARGUMENT);
  expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual([code]);
  expect(error.details).toMatch(details);
  expect(error.details).not.toMatch(ENGINE_WORDING);
}

// ---- bytes ----

const bytes = (write: (writer: BinaryWriter) => void): Uint8Array => {
  const writer = new BinaryWriter();
  write(writer);
  return writer.finish();
};
/** A length-delimited field. */
const field = (number: number, body: Uint8Array): Uint8Array =>
  bytes((w) => w.uint32((number << 3) | 2).bytes(body));
const concat = (...parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);

/** `InvokeRequest { send_task { task } }` around the bytes of a Task. */
const sendTask = (task: Uint8Array): Uint8Array => field(1, field(1, task));

/** The bytes of a valid Task (as the client would send it), plus `extra` fields appended. */
function taskBytes(task: Task, ...extra: Uint8Array[]): Uint8Array {
  return concat(pb.Task.encode(pb.Task.fromPartial(encodeTaskOnly(task))).finish(), ...extra);
}
function encodeTaskOnly(task: Task): pb.Task {
  const request = encodeInvokeRequest('send_task', task);
  if (request.operation?.$case !== 'sendTask') throw new Error('unreachable');
  return request.operation.value.task!;
}

const stringValue = (text: string): Uint8Array => bytes((w) => w.uint32(26).string(text));
const structOf = (key: string, value: Uint8Array): Uint8Array =>
  field(
    1,
    concat(
      bytes((w) => w.uint32(10).string(key)),
      field(2, value),
    ),
  );
/** `Task.metadata` (field 5) holding one key. */
const metadataWith = (key: string, value: Uint8Array): Uint8Array => field(5, structOf(key, value));

function varintBytes(value: number): number[] {
  const out: number[] = [];
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return out;
}

/**
 * A Value nested `levels` deep (`{"a": {"a": … 1}}`, or `[[… 1]]` for lists), built in linear time:
 * every level is a header in front of the next one, so only the lengths are computed bottom-up.
 */
function nestedValue(levels: number, kind: 'struct' | 'list' = 'struct'): Uint8Array {
  const innermost = bytes((w) => w.uint32(17).double(1));
  const headers: number[][] = [];
  let inner = innermost.length;
  for (let i = 0; i < levels; i++) {
    let header: number[];
    if (kind === 'struct') {
      const entry = 3 + 1 + varintBytes(inner).length + inner; // key "a", then the value field
      const struct = 1 + varintBytes(entry).length + entry;
      header = [
        0x2a,
        ...varintBytes(struct),
        0x0a,
        ...varintBytes(entry),
        0x0a,
        0x01,
        0x61,
        0x12,
        ...varintBytes(inner),
      ];
    } else {
      const list = 1 + varintBytes(inner).length + inner;
      header = [0x32, ...varintBytes(list), 0x0a, ...varintBytes(inner)];
    }
    headers.push(header);
    inner += header.length;
  }
  headers.reverse();
  return Buffer.concat([Buffer.from(headers.flat()), innermost]);
}

const newTask = (): Task => createTask('hi');

describe('GRPCTransport: malformed and hostile request messages', () => {
  it.each([
    [
      'a varint cut by the end of its message',
      () => Buffer.from([0x0a, 0x04, 0x0a, 0x02, 0x10, 0xff, 0x01]),
      /the message ends inside \/send_task\/task\/state/,
    ],
    [
      'a varint cut by the end of the bytes',
      () => Buffer.from([0x0a, 0x04, 0x0a, 0x02, 0x10, 0xff]),
      /truncated or malformed inside \/send_task\/task\/state/,
    ],
    [
      'a truncated message',
      () => sendTask(taskBytes(newTask())).subarray(0, 20),
      /longer than what holds it|ends inside/,
    ],
    [
      'a field longer than its message',
      () => Buffer.from([0x0a, 0x05, 0x0a, 0x10, 0x0a, 0x01, 0x41]),
      /\/send_task\/task is longer than what holds it/,
    ],
    ['a field tag of field number 0', () => Buffer.from([0x00, 0x01]), /invalid field tag/],
    ['a field tag of wire type 7', () => Buffer.from([0x0f, 0x01]), /invalid field tag/],
    ['a lone end-group tag', () => Buffer.from([0x0c]), /end-group tag without its start/],
    ['groups nested a million deep', () => Buffer.alloc(1_000_000, 0x33), /truncated or malformed/],
    [
      'a varint where the operation is a message',
      () => Buffer.from([0x08, 0x01]),
      /\/send_task has wire type varint, expected length-delimited/,
    ],
    [
      'a string where the task state is a varint',
      () => sendTask(taskBytes(newTask(), field(2, Buffer.from('x')))),
      /\/send_task\/task\/state has wire type length-delimited, expected varint/,
    ],
    [
      'a varint where a Struct key is a string',
      () => sendTask(taskBytes(newTask(), field(5, field(1, Buffer.from([0x08, 0x01]))))),
      /\/send_task\/task\/metadata key has wire type varint/,
    ],
    [
      'a string that is not UTF-8',
      () =>
        sendTask(
          taskBytes(
            newTask(),
            metadataWith(
              'k',
              bytes((w) => w.uint32(26).bytes(Buffer.from([0xc3, 0x28]))),
            ),
          ),
        ),
      /\/send_task\/task\/metadata\/k is not valid UTF-8/,
    ],
  ])('%s is INVALID_ARGUMENT naming what is wrong', async (_name, body, details) => {
    const { url, handler } = await harness.server();
    const error = await refusal(url, body());
    expectInvalid(error, 'INVALID_REQUEST', /^Request body is not a valid agent\.v1\.InvokeRequest: /);
    expect(error.details).toMatch(details);
    expect(handler.calls).toHaveLength(0);
  });

  it.each([
    [
      'task state',
      () =>
        sendTask(
          taskBytes(
            newTask(),
            bytes((w) => w.uint32(16).int32(99)),
          ),
        ),
      '/send_task/task/state',
    ],
    [
      'negative task state',
      () =>
        sendTask(
          taskBytes(
            newTask(),
            bytes((w) => w.uint32(16).int32(-1)),
          ),
        ),
      '/send_task/task/state',
    ],
    [
      'message role',
      () => {
        const task = encodeTaskOnly(newTask());
        task.messages[0]!.role = 42 as pb.Role;
        return sendTask(pb.Task.encode(task).finish());
      },
      '/send_task/task/messages/0/role',
    ],
    [
      'list_tasks state',
      () =>
        field(
          5,
          bytes((w) => w.uint32(16).int32(42)),
        ),
      '/list_tasks/state',
    ],
  ])(
    'an out-of-range %s is INVALID_ARGUMENT / VALIDATION_FAILED with its pointer',
    async (_name, body, pointer) => {
      const { url, handler } = await harness.server();
      const error = await refusal(url, body());
      expectInvalid(error, 'VALIDATION_FAILED', /has unknown enum value/);
      expect(JSON.parse(String(error.metadata.get(ERROR_DATA_METADATA)[0]))).toMatchObject({
        errors: [{ pointer }],
      });
      expect(handler.calls).toHaveLength(0);
    },
  );

  describe('nesting: the JSON limit of every wire (depth 64, the Task being 1)', () => {
    it.each([
      ['Struct', 'struct'],
      ['ListValue', 'list'],
    ] as const)('a %s nested 10,000 levels deep is refused before it is walked', async (_name, kind) => {
      const { url, handler } = await harness.server();
      const error = await refusal(
        url,
        sendTask(taskBytes(newTask(), metadataWith('deep', nestedValue(10_000, kind)))),
      );
      expectInvalid(error, 'INVALID_REQUEST', /^Invalid request: JSON nesting depth exceeds 64$/);
      expect(JSON.parse(String(error.metadata.get(ERROR_DATA_METADATA)[0]))).toEqual({ max_depth: 64 });
      expect(handler.calls).toHaveLength(0);
    });

    it.each(['Stream', 'Invoke'] as const)(
      '%s: metadata reaching depth 64 is served, depth 65 is refused',
      async (method) => {
        const { url, handler } = await harness.server();
        // metadata is depth 2 and its key's value adds 62 levels: 64 in all, as HTTP counts this body.
        const deepest = await sendRaw(
          url,
          sendTask(taskBytes(newTask(), metadataWith('deep', nestedValue(62)))),
          method,
        );
        expect(deepest.ok).toBe(true);
        expect(handler.calls).toHaveLength(1);
        let value: unknown = handler.calls[0]!.task.metadata.deep;
        let levels = 0;
        for (; typeof value === 'object' && value !== null; levels++)
          value = (value as Record<string, unknown>).a;
        expect([levels, value]).toEqual([62, 1]);

        const error = await refusal(
          url,
          sendTask(taskBytes(newTask(), metadataWith('deep', nestedValue(63)))),
          method,
        );
        expectInvalid(error, 'INVALID_REQUEST', /^Invalid request: JSON nesting depth exceeds 64$/);
        expect(handler.calls).toHaveLength(1);
      },
    );

    it("a part's content counts from its place in the Task (depth 6)", async () => {
      const { url, handler } = await harness.server();
      const withContent = (levels: number): Uint8Array => {
        const task = encodeTaskOnly(newTask());
        const part = concat(
          bytes((w) => w.uint32(10).string('data')),
          field(2, nestedValue(levels)),
        );
        const { id, timestamp } = task.messages[0]!;
        const message = concat(
          bytes((w) => w.uint32(10).string(id).uint32(16).int32(1).uint32(34).string(timestamp)),
          field(3, part),
        );
        task.messages = [];
        return sendTask(concat(pb.Task.encode(task).finish(), field(3, message)));
      };
      // task 1, messages 2, message 3, parts 4, part 5, content 6…64: 59 levels.
      expect((await sendRaw(url, withContent(59))).ok).toBe(true);
      expect(handler.calls).toHaveLength(1);
      expectInvalid(await refusal(url, withContent(60)), 'INVALID_REQUEST', /nesting depth exceeds 64/);
    });

    it('Subscribe and Stream refuse the same way', async () => {
      const { url } = await harness.server();
      const deep = sendTask(taskBytes(newTask(), metadataWith('deep', nestedValue(10_000))));
      expectInvalid(await refusal(url, deep, 'Stream'), 'INVALID_REQUEST', /nesting depth exceeds 64/);
      const truncated = Buffer.from([0x0a, 0x09, 0x61]);
      expectInvalid(
        await refusal(url, truncated, 'Subscribe'),
        'INVALID_REQUEST',
        /^Request body is not a valid agent\.v1\.SubscribeRequest: /,
      );
    });
  });

  describe('array length: at most 10,000 elements, as on every wire', () => {
    it('a ListValue of 10,001 values is refused naming the limit; 10,000 are served', async () => {
      const { url, handler } = await harness.server();
      const list = (count: number): Uint8Array =>
        bytes((w) => {
          const values = new BinaryWriter();
          for (let i = 0; i < count; i++) values.uint32(10).bytes(bytes((v) => v.uint32(8).int32(0)));
          w.uint32(50).bytes(values.finish());
        });
      const error = await refusal(url, sendTask(taskBytes(newTask(), metadataWith('list', list(10_001)))));
      expectInvalid(error, 'INVALID_REQUEST', /^Invalid request: JSON array length exceeds 10000$/);
      expect(JSON.parse(String(error.metadata.get(ERROR_DATA_METADATA)[0]))).toEqual({
        max_array_length: 10_000,
      });
      expect(handler.calls).toHaveLength(0);

      expect(
        (await sendRaw(url, sendTask(taskBytes(newTask(), metadataWith('list', list(10_000)))))).ok,
      ).toBe(true);
      expect(handler.calls[0]!.task.metadata.list).toHaveLength(10_000);
    });

    it('a repeated field (parts) of 10,001 elements is refused', async () => {
      const { url, handler } = await harness.server();
      const task = encodeTaskOnly(newTask());
      const part = field(
        3,
        bytes((w) => w.uint32(10).string('text')),
      );
      const message = concat(
        bytes((w) => w.uint32(10).string('m').uint32(16).int32(1)),
        ...new Array<Uint8Array>(10_001).fill(part),
      );
      task.messages = [];
      const error = await refusal(url, sendTask(concat(pb.Task.encode(task).finish(), field(3, message))));
      expectInvalid(error, 'INVALID_REQUEST', /array length exceeds 10000/);
      expect(handler.calls).toHaveLength(0);
    });

    it('a message over maxBodyBytes is RESOURCE_EXHAUSTED', async () => {
      const { url, handler } = await harness.server({ maxBodyBytes: 4096 });
      const answer = await sendRaw(
        url,
        sendTask(taskBytes(newTask(), metadataWith('big', stringValue('x'.repeat(8192))))),
      );
      expect(answer.ok).toBe(false);
      if (!answer.ok) expect(answer.error.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(handler.calls).toHaveLength(0);
    });
  });

  describe('Struct keys that name Object.prototype members', () => {
    it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
      '"%s" stays an own data key, as JSON.parse keeps it: nothing inherited, nothing polluted',
      async (key) => {
        const { url, handler } = await harness.server();
        const injected = structOf('polluted', stringValue('yes'));
        const answer = await sendRaw(
          url,
          sendTask(
            taskBytes(
              newTask(),
              metadataWith(
                key,
                bytes((w) => w.uint32(42).bytes(injected)),
              ),
            ),
          ),
        );
        expect(answer.ok).toBe(true);
        const { metadata } = handler.calls[0]!.task;
        expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
        expect(Object.prototype.hasOwnProperty.call(metadata, key)).toBe(true);
        expect(Object.getOwnPropertyDescriptor(metadata, key)?.value).toEqual({ polluted: 'yes' });
        expect((metadata as Record<string, unknown>).polluted).toBeUndefined();
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    );
  });
});

describe('GRPCTransport: a submitted Task with proto3 defaults', () => {
  it.each(['Invoke', 'Stream'] as const)(
    '%s: an unset state is submitted, as a JSON Task without state',
    async (method) => {
      const { url, handler } = await harness.server();
      const task = encodeTaskOnly(newTask());
      task.state = pb.TaskState.TASK_STATE_UNSPECIFIED;
      const answer = await sendRaw(url, sendTask(pb.Task.encode(task).finish()), method);
      expect(answer.ok).toBe(true);
      expect(handler.calls).toHaveLength(1);
      expect(handler.calls[0]!.task.state).toBe('submitted');
      if (method === 'Invoke' && answer.ok) {
        const response = pb.InvokeResponse.decode(answer.response);
        expect(response.result?.$case).toBe('task');
      }
    },
  );

  it('an unset state elsewhere (list_tasks) is still refused', async () => {
    const { url } = await harness.server();
    const error = await refusal(
      url,
      field(
        5,
        bytes((w) => w.uint32(16).int32(0)),
      ),
    );
    expectInvalid(error, 'VALIDATION_FAILED', /\/list_tasks\/state has unknown enum value 0/);
  });
});

describe('GRPCTransport client: answers read by the same bounded reader', () => {
  const nested = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { leaf: 1 };
    for (let i = 1; i < levels; i++) value = { a: value };
    return value;
  };

  it('a Task nested to the limit comes back through send, subscribe and list_tasks', async () => {
    const { url } = await harness.server();
    const client = harness.client();
    const task = createTask('hi', { metadata: { x: nested(62) } });
    const answered = await client.send<Task>(CLIENT_OPERATIONS.send_task, url, task);
    expect(answered.metadata).toEqual(task.metadata);

    const streamed = createTask('hi', { metadata: { x: nested(62) } });
    let last: unknown;
    for await (const event of client.subscribe(url, streamed)) last = event;
    expect(last).toMatchObject({ type: 'task.status', final: true, task: { metadata: streamed.metadata } });

    const list = await client.send<{ tasks: Task[] }>(CLIENT_OPERATIONS.list_tasks, url, {});
    expect(list.tasks.map((listed) => listed.metadata)).toEqual([streamed.metadata, task.metadata]);
  });

  it('one level more is refused before it is sent, with the error the server would answer', async () => {
    const { url, handler } = await harness.server();
    const client = harness.client();
    await expect(
      client.send(CLIENT_OPERATIONS.send_task, url, createTask('hi', { metadata: { x: nested(63) } })),
    ).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'Invalid request: JSON nesting depth exceeds 64',
    });
    expect(handler.calls).toHaveLength(0);
  });
});
