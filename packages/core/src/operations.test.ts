import {
  CLIENT_OPERATIONS,
  MethodNotFoundError,
  TaskNotFoundError,
  ValidationError,
  createTask,
  handlerFromFunction,
  isFinalEvent,
  type CallContext,
  type TaskEvent,
} from './index.js';
import { dispatchOperation, finalStatusEvent, parseCancelRequest, readTaskPayload } from './internal.js';

const ctx: CallContext = { signal: new AbortController().signal, headers: {}, transport: 'memory' };

describe('parseCancelRequest', () => {
  it('reads task_id, id and the reason forms', () => {
    expect(parseCancelRequest({ task_id: 't', reason: 'r' })).toEqual({ taskId: 't', reason: 'r' });
    expect(parseCancelRequest({ id: 't', metadata: { reason: 'm' } })).toEqual({ taskId: 't', reason: 'm' });
    expect(parseCancelRequest({ task_id: 't' })).toEqual({ taskId: 't' });
  });
  it('rejects bodies without an id', () => {
    expect(() => parseCancelRequest({})).toThrow(ValidationError);
    expect(() => parseCancelRequest('t')).toThrow(ValidationError);
  });
});

describe('handlerFromFunction and dispatchOperation', () => {
  const handler = handlerFromFunction(async (task) => ({ ...task, state: 'completed' }), {
    card: { name: 'fn', description: 'd', url: 'x' },
  });

  it('dispatches the operation table', async () => {
    const task = createTask('hi');
    await expect(dispatchOperation(handler, 'send_task', task, ctx)).resolves.toMatchObject({
      id: task.id,
      state: 'completed',
    });
    await expect(dispatchOperation(handler, 'send_task', { task }, ctx)).resolves.toMatchObject({
      id: task.id,
    });
    await expect(dispatchOperation(handler, 'get_card', undefined, ctx)).resolves.toMatchObject({
      name: 'fn',
    });
    await expect(dispatchOperation(handler, 'cancel_task', { task_id: 'x' }, ctx)).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(dispatchOperation(handler, 'nope', {}, ctx)).rejects.toBeInstanceOf(MethodNotFoundError);
    await expect(dispatchOperation(handler, 'send_task', { id: 5 }, ctx)).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('streams one final status', async () => {
    const events: TaskEvent[] = [];
    for await (const event of handler.handleTaskStreaming(createTask('x'), ctx)) events.push(event);
    expect(events).toHaveLength(1);
    expect(isFinalEvent(events[0]!)).toBe(true);
  });

  it('exposes the client operation table', () => {
    expect(CLIENT_OPERATIONS.send_task).toEqual({ name: 'send_task', method: 'POST', path: '/tasks/' });
    expect(CLIENT_OPERATIONS.stream_task.streaming).toBe(true);
  });

  it('readTaskPayload prefers a bare task with an id', () => {
    const task = createTask('a');
    expect(readTaskPayload(task).id).toBe(task.id);
    expect(finalStatusEvent(task)).toMatchObject({ type: 'task.status', final: true, task });
  });
});
