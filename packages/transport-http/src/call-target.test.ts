import { CLIENT_OPERATIONS, ValidationError, createTask, type ClientRequestSpec } from '@agent/core';
import { callTarget } from './call-target.js';

const BASE = 'http://127.0.0.1:8080/agents/a';

describe('callTarget', () => {
  it('sends a POST body as it came when no placeholder takes a field from it', () => {
    const task = createTask('hello');
    const target = callTarget(CLIENT_OPERATIONS.send_task, BASE, task, { trace: '1' });
    expect(target.url).toBe(`${BASE}/tasks/?trace=1`);
    expect(target.body).toBe(task);
    expect(callTarget(CLIENT_OPERATIONS.cancel_task, BASE, undefined).body).toEqual({});
  });

  it("fills the task routes' {id} from task_id, else id, and sends neither in the query", () => {
    expect(callTarget(CLIENT_OPERATIONS.get_task, BASE, { task_id: 'a/b', history_length: 2 }).url).toBe(
      `${BASE}/tasks/a%2Fb?history_length=2`,
    );
    expect(callTarget(CLIENT_OPERATIONS.get_task, BASE, { id: 't 1' }).url).toBe(`${BASE}/tasks/t%201`);
    expect(() => callTarget(CLIENT_OPERATIONS.get_task, BASE, {})).toThrow(
      new ValidationError('Invalid get_task request: /task_id is required'),
    );
  });

  it('takes a placeholder from params before data, and sends PUT data as the body', () => {
    const spec: ClientRequestSpec = { name: 'replace', method: 'PUT', path: '/things/{name}' };
    const data = { name: 'in-body', size: 1 };
    const fromParams = callTarget(spec, BASE, data, { name: 'in-path', q: 'x' });
    expect(fromParams).toEqual({ url: `${BASE}/things/in-path?q=x`, body: data });
    const fromData = callTarget(spec, BASE, data);
    expect(fromData).toEqual({ url: `${BASE}/things/in-body`, body: { size: 1 } });
    // The caller's object is not changed.
    expect(data).toEqual({ name: 'in-body', size: 1 });
  });

  it('sends DELETE fields in the query and no body', () => {
    const spec: ClientRequestSpec = { name: 'remove', method: 'DELETE', path: '/things/{name}' };
    expect(callTarget(spec, BASE, { name: 'é', hard: true, note: 'a b' })).toEqual({
      url: `${BASE}/things/%C3%A9?hard=true&note=a+b`,
      body: undefined,
    });
  });
});
