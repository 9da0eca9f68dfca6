/**
 * The caller's address the pipeline sees over gRPC is the peer's address without its port, so
 * limits that tell anonymous callers apart by address count two connections from one host as one
 * caller, as the other wires do.
 */
import { CLIENT_OPERATIONS } from '@agent/core';
import { peerAddress } from './server-adapter.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

describe('gRPC caller address', () => {
  it('drops the port of IPv4 and IPv6 peers', () => {
    expect(peerAddress('127.0.0.1:50123')).toBe('127.0.0.1');
    expect(peerAddress('::1:50123')).toBe('::1');
    expect(peerAddress('::ffff:10.1.2.3:40000')).toBe('::ffff:10.1.2.3');
    expect(peerAddress('unknown')).toBe('unknown');
  });

  it("counts an anonymous caller's connections together against maxConcurrentTasksPerCaller", async () => {
    const { handler, url } = await harness.server({ maxConcurrentTasksPerCaller: 1 });
    const first = harness.client();
    const second = harness.client();
    const held = task('hold');
    const answer = first.send(CLIENT_OPERATIONS.send_task, url, held);
    await handler.whenRunning(held.id);
    // Another connection from the same host: the same caller, over its share.
    await expect(second.send(CLIENT_OPERATIONS.send_task, url, task('echo hi'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { limit: 'tasks_per_caller' },
    });
    await first.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: held.id });
    await answer;
    await expect(second.send(CLIENT_OPERATIONS.send_task, url, task('echo hi'))).resolves.toMatchObject({
      state: 'completed',
    });
  });
});
