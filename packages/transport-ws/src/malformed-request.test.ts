/** A malformed request target must get a 400, never take the process down. */
import { connect } from 'node:net';
import { closeAll, serve } from './test-support/harness.js';

afterEach(closeAll);

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
  });
}

describe('a request whose target is not a valid URL', () => {
  it.each([
    ['a plain request', 'GET //[ HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'an upgrade',
      'GET //[ HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    ],
  ])('%s gets 400 and the server keeps serving', async (_name, request) => {
    const { server } = await serve();
    const reply = await rawRequest(server.port, request);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('INVALID_REQUEST');
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(200);
  });
});
