/**
 * Hostile JSON is refused on its text, before anything parses, walks or validates it: a body nested
 * past the depth limit or with an over-long array gets 400 INVALID_REQUEST naming the limit, and a
 * malformed body gets an answer without the parser's own wording.
 */
import { createTask, handlerFromFunction } from '@agent/core';
import { HTTPTransport } from './index.js';

async function post(
  url: string,
  body: string,
): Promise<{ status: number; json: { error: Record<string, unknown> } }> {
  const response = await fetch(`${url}/tasks/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, json: (await response.json()) as { error: Record<string, unknown> } };
}

const ENGINE_WORDING = /Maximum call stack|Unexpected token|Unexpected end|position \d+|at .*\.js/;

describe.each(['node', 'express'] as const)('JSON limits on the %s backend', (backend) => {
  let transport: HTTPTransport;
  beforeAll(async () => {
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, maxBodyBytes: 4 * 1024 * 1024 });
    transport.bind(handlerFromFunction(async (task) => ({ ...task, state: 'completed' })));
    await transport.start();
  });
  afterAll(() => transport.stop());

  it('refuses nesting past the limit, however deep and wherever it is', async () => {
    const task = createTask('echo hi');
    for (const depth of [65, 3_000, 20_000]) {
      const deep = '['.repeat(depth) + ']'.repeat(depth);
      for (const body of [JSON.stringify({ ...task, metadata: { deep: '@' } }).replace('"@"', deep), deep]) {
        const answer = await post(transport.url, body);
        expect(answer.status).toBe(400);
        expect(answer.json.error).toMatchObject({
          code: 'INVALID_REQUEST',
          message: 'Invalid request: JSON nesting depth exceeds 64',
          data: { max_depth: 64 },
        });
      }
    }
  });

  it('refuses an array longer than the limit', async () => {
    const task = createTask('echo hi');
    const parts = Array.from({ length: 10_001 }, () => ({ kind: 'text', content: 'x' }));
    const answer = await post(transport.url, JSON.stringify({ ...task, metadata: { parts } }));
    expect(answer).toMatchObject({ status: 400, json: { error: { data: { max_array_length: 10_000 } } } });
  });

  it('answers malformed JSON without the parser’s wording; ordinary tasks still pass', async () => {
    for (const body of ['{"id": ', '{"id": "x",}', '[[[', 'nope']) {
      const answer = await post(transport.url, body);
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.json)).not.toMatch(ENGINE_WORDING);
    }
    const ok = await post(transport.url, JSON.stringify(createTask('echo fine')));
    expect(ok.status).toBe(200);
  });
});
