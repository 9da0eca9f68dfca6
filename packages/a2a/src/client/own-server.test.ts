/** Our A2A client against our own A2A server (A2AServer on an HTTPTransport), over both bindings. */
import { APIKeyAuth } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  createMessage,
  createTask,
  isFinalEvent,
  messageText,
  validateTask,
  type AgentCard,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { ALICE, BOB, serveA2A, type Served } from '../server/test-support/serve.js';
import { A2ATransport } from './a2a-transport.js';
import type { A2ABinding } from './bindings.js';
import type { A2ATransportOptions } from './options.js';

const KEYS = new APIKeyAuth({ validKeys: { [ALICE]: [], [BOB]: [], 'not-known-there': [] } });

function client(credentials: string, options: A2ATransportOptions = {}): A2ATransport {
  return new A2ATransport({ authenticator: KEYS, credentials, ...options });
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const out: TaskEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe.each<A2ABinding>(['JSONRPC', 'HTTP+JSON'])('over %s', (binding) => {
  let s: Served;
  let alice: A2ATransport;
  const send = (t: A2ATransport, task: Task): Promise<Task> =>
    t.send<Task>(CLIENT_OPERATIONS.send_task, s.url, task).then((result) => validateTask(result));

  beforeAll(async () => {
    s = await serveA2A();
    alice = client(ALICE, { bindings: [binding] });
  });
  afterAll(async () => {
    await alice.stop();
    await s.stop();
  });

  it('reads the card', async () => {
    const card = await alice.send<AgentCard>(CLIENT_OPERATIONS.get_card, s.url);
    expect(card).toMatchObject({ name: 'a2a-test', securitySchemes: { apiKey: { type: 'apiKey' } } });
  });

  it('sends a task and continues one that stopped for input', async () => {
    const done = await send(alice, createTask('echo hello'));
    expect(done.state).toBe('completed');
    expect(messageText(done.messages.at(-1))).toBe('hello');
    const asked = await send(alice, createTask('ask name'));
    expect(asked.state).toBe('input-required');
    const answered = await send(alice, { ...asked, messages: [...asked.messages, createMessage('Ada')] });
    expect(answered).toMatchObject({ id: asked.id, state: 'completed' });
    expect(messageText(answered.messages.at(-1))).toBe('got Ada');
  });

  it('streams a task to exactly one final status', async () => {
    const events = await collect(alice.subscribe(s.url, createTask('ticks 2')));
    expect(events.filter((e) => e.type === 'task.artifact')).toHaveLength(2);
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'completed', final: true });
  });

  it('cancels a running task, and refuses to cancel a completed one', async () => {
    const stream = alice.subscribe(s.url, createTask('hold'))[Symbol.asyncIterator]();
    const id = ((await stream.next()).value as TaskEvent).task_id;
    await s.handler.contract.whenRunning(id);
    const canceled = validateTask(
      await alice.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: id, reason: 'enough' }),
    );
    expect(canceled).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'enough' } });
    const rest: TaskEvent[] = [];
    for (let step = await stream.next(); !step.done; step = await stream.next()) rest.push(step.value);
    expect(rest.at(-1)).toMatchObject({ state: 'canceled', final: true });
    // Cancel is idempotent in A2A; a task that completed cannot be canceled.
    await expect(alice.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: id })).resolves.toMatchObject({
      state: 'canceled',
    });
    const done = await send(alice, createTask('echo done'));
    await expect(
      alice.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: done.id }),
    ).rejects.toMatchObject({
      code: 'TASK_NOT_CANCELABLE',
    });
  });

  it('gets, lists and follows its own tasks; another principal sees none of them', async () => {
    const task = await send(alice, createTask('echo mine'));
    const got = validateTask(await alice.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: task.id }));
    expect(got).toMatchObject({ id: task.id, state: 'completed' });
    const list = await alice.send<TaskList>(CLIENT_OPERATIONS.list_tasks, s.url, { page_size: 100 });
    expect(list.tasks.map((entry) => entry.id)).toContain(task.id);
    const followed = await collect(alice.subscribeTask(s.url, task.id));
    expect(followed.at(-1)).toMatchObject({ state: 'completed', final: true });
    const bob = client(BOB, { bindings: [binding] });
    try {
      await expect(bob.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: task.id })).rejects.toMatchObject({
        code: 'TASK_NOT_FOUND',
      });
    } finally {
      await bob.stop();
    }
  });

  it('surfaces a refused key as UNAUTHENTICATED with status 401', async () => {
    const stranger = client('not-known-there', { bindings: [binding] });
    try {
      await expect(send(stranger, createTask('echo x'))).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
        status: 401,
      });
    } finally {
      await stranger.stop();
    }
  });
});

it('echoes the tenant the card interface names', async () => {
  const s = await serveA2A({ tenant: 't1' });
  const t = client(ALICE);
  try {
    const task = validateTask(await t.send(CLIENT_OPERATIONS.send_task, s.url, createTask('echo-tenant')));
    expect(messageText(task.messages.at(-1))).toBe('t1');
  } finally {
    await t.stop();
    await s.stop();
  }
});
