/** A frame nested past the JSON limits is refused on its text, with an error frame naming the limit. */
import { closeAll, rawSocket, serve, task } from './test-support/harness.js';

afterEach(closeAll);

it('answers a too-deep frame with INVALID_REQUEST, and the connection keeps serving', async () => {
  const { server } = await serve();
  const raw = await rawSocket(server.url);
  const depth = 20_000;
  const frame = JSON.stringify({
    op: 'task.send',
    id: 'deep',
    task: { ...task('echo hi'), metadata: { d: '@' } },
  });
  raw.send(frame.replace('"@"', '['.repeat(depth) + ']'.repeat(depth)));
  const error = await raw.next((f) => f.op === 'error');
  expect(error).toMatchObject({ error: { code: 'INVALID_REQUEST', data: { max_depth: 64 } } });
  expect(JSON.stringify(error)).not.toMatch(/Maximum call stack/);
  raw.send({ op: 'agent.card', id: 'after' });
  expect(await raw.next((f) => f.id === 'after')).toMatchObject({ op: 'result' });
});
