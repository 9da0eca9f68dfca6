import { CLIENT_OPERATIONS, createTask, isFinalEvent, type Task, type TaskEvent } from '@agent/core';
import { countingRelay, type CountingRelay } from '@agent/server/testing';
import { SSETransport } from './sse-transport.js';
import { startHarness, type Harness } from './test-support/harness.js';

describe('SSE client connection reuse', () => {
  let h: Harness;
  let relay: CountingRelay;
  let client: SSETransport;
  beforeAll(async () => {
    h = await startHarness();
    relay = await countingRelay(h.url);
  });
  beforeEach(() => {
    client = new SSETransport({ url: relay.url });
  });
  afterEach(() => client.stop());
  afterAll(async () => {
    await relay.close();
    await h.stop();
  });

  it('reuses keep-alive connections for streams one after another, also when the reader stops at the final event', async () => {
    const before = relay.accepted();
    for (let i = 0; i < 6; i++) {
      const seen: TaskEvent[] = [];
      for await (const event of client.subscribe(relay.url, createTask('stream 3'), {})) seen.push(event);
      expect(seen.filter((event) => event.type === 'task.artifact')).toHaveLength(3);
      expect(seen.filter(isFinalEvent)).toHaveLength(1);
    }
    // A reader that breaks out at the final event, as most do.
    for (let i = 0; i < 6; i++) {
      for await (const event of client.subscribe(relay.url, createTask('stream 2'), {}))
        if (isFinalEvent(event)) break;
    }
    const echoed = await client.send<Task>(CLIENT_OPERATIONS.send_task, relay.url, createTask('echo after'));
    expect(echoed.state).toBe('completed');
    // A connection per stream before; now the stream's end drains and its socket goes back to the
    // pool (a call that comes before the end has arrived may still open a second one).
    expect(relay.accepted() - before).toBeLessThanOrEqual(3);
  });

  it('tears down the connection of a stream left before its final event', async () => {
    const before = relay.accepted();
    for await (const event of client.subscribe(relay.url, createTask('stream 50'), {})) {
      expect(event.type).toBe('task.artifact');
      break;
    }
    const echoed = await client.send<Task>(
      CLIENT_OPERATIONS.send_task,
      relay.url,
      createTask('echo still fine'),
    );
    expect(echoed.state).toBe('completed');
    expect(relay.accepted() - before).toBe(2);
  });
});
