/** Our A2A client keeps its keep-alive connections across streams, over both bindings. */
import { APIKeyAuth } from '@agent/auth';
import { CLIENT_OPERATIONS, createTask, isFinalEvent, type Task } from '@agent/core';
import { countingRelay, type CountingRelay } from '@agent/server/testing';
import { ALICE, serveA2A, type Served } from '../server/test-support/serve.js';
import { A2ATransport } from './a2a-transport.js';
import type { A2ABinding } from './bindings.js';

const KEYS = new APIKeyAuth({ validKeys: { [ALICE]: [] } });

describe.each<A2ABinding>(['JSONRPC', 'HTTP+JSON'])('A2A client connection reuse over %s', (binding) => {
  let s: Served;
  let relay: CountingRelay;
  let client: A2ATransport;
  beforeAll(async () => {
    // The card advertises the relay, so that every call of the client goes through it.
    let serverUrl = '';
    relay = await countingRelay(() => serverUrl);
    s = await serveA2A({ publicUrl: relay.url });
    serverUrl = s.url;
  });
  beforeEach(() => {
    client = new A2ATransport({ authenticator: KEYS, credentials: ALICE, bindings: [binding] });
  });
  afterEach(() => client.stop());
  afterAll(async () => {
    await relay.close();
    await s.stop();
  });

  it('streams one after another over reused connections, the reader stopping at the final event', async () => {
    const first = await client.send<Task>(CLIENT_OPERATIONS.send_task, relay.url, createTask('echo warm'));
    expect(first.state).toBe('completed');
    const before = relay.accepted();
    for (let i = 0; i < 8; i++) {
      let artifacts = 0;
      for await (const event of client.subscribe(relay.url, createTask('ticks 3'), {})) {
        if (event.type === 'task.artifact') artifacts++;
        if (isFinalEvent(event)) break;
      }
      expect(artifacts).toBe(3);
    }
    // A stream's end comes right after its final event, and its socket goes back to the pool (one
    // that comes before the end has arrived may still open another).
    expect(relay.accepted() - before).toBeLessThanOrEqual(2);
  });

  it('serves the next call after a stream left in the middle', async () => {
    const before = relay.accepted();
    for await (const event of client.subscribe(relay.url, createTask('ticks 5'), {})) {
      expect(event.type).not.toBe('task.error');
      break;
    }
    const echoed = await client.send<Task>(CLIENT_OPERATIONS.send_task, relay.url, createTask('echo after'));
    expect(echoed.state).toBe('completed');
    expect(relay.accepted() - before).toBeGreaterThanOrEqual(1);
  });
});
