/**
 * The real process in A2A mode (AGENT_A2A=1): the public card, JSON-RPC SendMessage and
 * SendStreamingMessage on the TCK's scenarios, a multi-turn task, the push-notification SSRF switch,
 * and the native routes still served beside them on the same port.
 */
import { rawRequest, type RawResponse } from '@agent/test-support';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

const A2A_VERSION = { 'a2a-version': '1.0' };
let rpcIds = 0;

interface A2APart {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
}
interface A2AMessage {
  messageId: string;
  role: string;
  parts: A2APart[];
  taskId?: string;
  contextId?: string;
}
interface A2ATask {
  id: string;
  contextId: string;
  status: { state: string; message?: A2AMessage };
  artifacts?: { artifactId: string; parts: A2APart[] }[];
  history?: A2AMessage[];
}

function userMessage(prefix: string, extra: Partial<A2AMessage> = {}): A2AMessage {
  return {
    messageId: `${prefix}-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_USER',
    parts: [{ text: 'from the reference server test' }],
    ...extra,
  };
}

function rpc(server: ServerProcess, method: string, params: unknown): Promise<RawResponse> {
  return rawRequest(`${server.urls.http}/a2a`, {
    headers: A2A_VERSION,
    body: { jsonrpc: '2.0', id: ++rpcIds, method, params },
  });
}

/** The JSON-RPC result of a call that must succeed. */
async function result<T>(server: ServerProcess, method: string, params: unknown): Promise<T> {
  const response = await rpc(server, method, params);
  expect(response.status).toBe(200);
  const body = response.json as { result?: T; error?: unknown };
  if (body.result === undefined) throw new Error(`${method} failed: ${response.text}`);
  return body.result;
}

/** The `result` of every `data:` frame of an SSE body, in order. */
function sseResults(text: string): Record<string, unknown>[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((frame) =>
      frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trimStart())
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => {
      const frame = JSON.parse(data) as { result?: Record<string, unknown>; error?: unknown };
      if (!frame.result) throw new Error(`error frame: ${data}`);
      return frame.result;
    });
}

function textOf(message: A2AMessage | undefined): string | undefined {
  return message?.parts[0]?.text;
}

describe('the reference server in A2A mode', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ AGENT_A2A: '1' });
  });
  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it('serves the public card: ProtoJSON, JSON-RPC first at /a2a, streaming, cacheable', async () => {
    const response = await rawRequest(`${server.urls.http}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(response.headers.etag).toBeDefined();
    const card = response.json as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'reference-agent',
      capabilities: { streaming: true },
      supportedInterfaces: [
        { url: `${server.urls.http}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ],
    });
    expect(Array.isArray(card.skills)).toBe(true);
  });

  it('answers SendMessage for tck-complete-task with the completed task, and GetTask reads it back', async () => {
    const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('tck-complete-task'),
    });
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(textOf(task.status.message)).toBe('Hello from TCK');
    expect(task.history?.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    expect(task.contextId).toEqual(expect.any(String));

    const read = await result<A2ATask>(server, 'GetTask', { id: task.id });
    expect(read).toMatchObject({
      id: task.id,
      contextId: task.contextId,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
  });

  it('answers the TCK artifact scenarios with one artifact of each part kind', async () => {
    const part = async (prefix: string): Promise<A2APart> => {
      const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
        message: userMessage(prefix),
      });
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts).toHaveLength(1);
      return task.artifacts![0]!.parts[0]!;
    };
    expect(await part('tck-artifact-text')).toEqual({ text: 'Generated text content' });
    expect(await part('tck-artifact-file')).toEqual({
      raw: Buffer.from('TCK file content').toString('base64'),
      filename: 'output.txt',
      mediaType: 'text/plain',
    });
    expect(await part('tck-artifact-file-url')).toEqual({
      url: 'https://example.com/output.txt',
      filename: 'output.txt',
      mediaType: 'text/plain',
    });
    expect(await part('tck-artifact-data')).toEqual({ data: { key: 'value', count: 42 } });
  });

  it('streams tck-stream-001: the task first, working, the artifact, completed last', async () => {
    const response = await rawRequest(`${server.urls.http}/a2a`, {
      headers: { ...A2A_VERSION, accept: 'text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: ++rpcIds,
        method: 'SendStreamingMessage',
        params: { message: userMessage('tck-stream-001') },
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = sseResults(response.text);
    expect(Object.keys(frames[0]!)).toEqual(['task']);
    const outline = frames.slice(1).map((frame) => {
      if (frame.statusUpdate)
        return `status ${(frame.statusUpdate as { status: { state: string } }).status.state}`;
      if (frame.artifactUpdate)
        return `artifact ${(frame.artifactUpdate as { artifact: { parts: A2APart[] } }).artifact.parts[0]?.text}`;
      return Object.keys(frame).join(',');
    });
    expect(outline).toEqual([
      'status TASK_STATE_WORKING',
      'artifact Stream hello from TCK',
      'status TASK_STATE_COMPLETED',
    ]);
  });

  it('stops tck-input-required for input; a message naming the task completes it', async () => {
    const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('tck-input-required'),
    });
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.status.message?.role).toBe('ROLE_AGENT');

    const next = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('follow-up', { taskId: task.id, contextId: task.contextId }),
    });
    expect(next.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
  });

  it('rejects tck-reject-task', async () => {
    const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('tck-reject-task'),
    });
    expect(task.status.state).toBe('TASK_STATE_REJECTED');
  });

  it('answers tck-message-response with a Message, not a Task', async () => {
    const answer = await result<Record<string, unknown>>(server, 'SendMessage', {
      message: userMessage('tck-message-response'),
    });
    expect(Object.keys(answer)).toEqual(['message']);
    expect((answer.message as { role: string }).role).toBe('ROLE_AGENT');
  });

  it('refuses a push webhook on a loopback address by default', async () => {
    const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('tck-input-required'),
    });
    const response = await rpc(server, 'CreateTaskPushNotificationConfig', {
      taskId: task.id,
      url: 'http://127.0.0.1:9/webhook',
    });
    expect((response.json as { error?: { code: number } }).error?.code).toBe(-32602);
  });

  it('still serves the native routes on the same port', async () => {
    const response = await rawRequest(`${server.urls.http}/tasks/`, {
      body: {
        id: `native-${Math.random().toString(36).slice(2)}`,
        messages: [
          {
            id: 'm1',
            role: 'user',
            parts: [{ type: 'text', content: 'echo hi' }],
            timestamp: new Date().toISOString(),
          },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ state: 'completed' });
  });
});

it('accepts a push webhook on a loopback address with AGENT_A2A_PUSH_ALLOW_PRIVATE=1', async () => {
  const server = await startServerProcess({ AGENT_A2A: '1', AGENT_A2A_PUSH_ALLOW_PRIVATE: '1' });
  try {
    const { task } = await result<{ task: A2ATask }>(server, 'SendMessage', {
      message: userMessage('tck-input-required'),
    });
    const config = await result<{ id: string; url: string }>(server, 'CreateTaskPushNotificationConfig', {
      taskId: task.id,
      url: 'http://127.0.0.1:9/webhook',
    });
    expect(config).toMatchObject({ taskId: task.id, url: 'http://127.0.0.1:9/webhook' });
  } finally {
    expect(await server.stop()).toBe(0);
  }
});
