/**
 * A2AServer in the OpenAPI document of its HTTPTransport: valid OpenAPI 3.1, every endpoint it
 * serves described (none `x-undocumented`), and its schemas and statuses matching real answers.
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import { RecordingLogger } from '@agent/server/testing';
import { rawRequest } from '@agent/test-support';
import { HTTPTransport, type HttpEndpoint, type OpenApiDocument } from '@agent/transport-http';
import { A2AServer, type A2AServerOptions } from './a2a-server.js';
import { ALICE, TestHandler, apiKeys, sseData, userMessage } from './test-support/serve.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Started {
  transport: HTTPTransport;
  a2a: A2AServer;
  /** What A2AServer.endpoints() gave the transport. */
  endpoints: readonly HttpEndpoint[];
  stop(): Promise<void>;
}

async function start(url: string, options: A2AServerOptions, withAuth: boolean): Promise<Started> {
  const a2a = new A2AServer(options);
  const spy = jest.spyOn(a2a, 'endpoints');
  const transport = new HTTPTransport({
    url,
    ...(withAuth ? { authenticator: apiKeys() } : {}),
    routes: [a2a],
    logger: new RecordingLogger(),
  });
  transport.bind(new TestHandler());
  await transport.start();
  const endpoints = spy.mock.results[0]!.value as HttpEndpoint[];
  return {
    transport,
    a2a,
    endpoints,
    async stop() {
      await a2a.close();
      await transport.stop();
    },
  };
}

async function expectValid(document: OpenApiDocument): Promise<void> {
  // The validator dereferences in place: give it a copy.
  const result = await validate(structuredClone(document) as never);
  if (!result.valid) throw new Error(compileErrors(result));
}

/** `METHOD /path` of each endpoint, below the transport URL's path, as the document names paths. */
function served(endpoints: readonly HttpEndpoint[], basePath: string): string[] {
  return endpoints.map((endpoint) => `${endpoint.method} ${endpoint.path.slice(basePath.length)}`).sort();
}

/** `METHOD /path` of each operation tagged a2a. */
function describedA2A(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.tags?.includes('a2a'))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

function undocumented(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation['x-undocumented'] === true)
      .map(([method]) => `${method} ${path}`),
  );
}

/** Checks values against the document's own schemas. */
function schemaChecker(document: OpenApiDocument): (name: string, value: unknown) => void {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ components: { schemas: document.components.schemas } }, 'openapi');
  return (name, value) => {
    const check = ajv.getSchema(`openapi#/components/schemas/${name}`)!;
    if (!check(value))
      throw new Error(`${name}: ${ajv.errorsText(check.errors)} in ${JSON.stringify(value)}`);
  };
}

describe('A2AServer in the OpenAPI document', () => {
  let s: Started;
  let document: OpenApiDocument;
  beforeAll(async () => {
    s = await start('http://127.0.0.1:0/agents/a', {}, true);
    document = s.transport.openapiDocument();
  });
  afterAll(() => s.stop());

  it('is valid OpenAPI 3.1 with no undocumented operation', async () => {
    await expectValid(document);
    expect(undocumented(document)).toEqual([]);
  });

  it('describes exactly the endpoints A2AServer serves', () => {
    const endpoints = served(s.endpoints, '/agents/a');
    expect(endpoints).toHaveLength(2 + 2 * 10);
    expect(describedA2A(document)).toEqual(endpoints);
    expect(endpoints).toEqual(
      expect.arrayContaining([
        'GET /.well-known/agent-card.json',
        'POST /a2a',
        'POST /a2a/rest/message:send',
        'GET /a2a/rest/{tenant}/tasks/{idAction}',
        'DELETE /a2a/rest/{tenant}/tasks/{taskId}/pushNotificationConfigs/{configId}',
      ]),
    );
  });

  it('describes the card as public and cacheable, the bindings behind the authenticator', () => {
    const card = document.paths['/.well-known/agent-card.json']!.get!;
    expect(card.security).toEqual([]);
    expect(Object.keys(card.responses)).toEqual(expect.arrayContaining(['200', '304']));
    expect(card.responses['200']!.headers).toHaveProperty('ETag');
    expect(card.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'If-None-Match' })]),
    );
    expect(document.paths['/a2a']!.post!.security).toBeUndefined();
    expect(document.paths['/a2a/rest/tasks']!.get!.security).toBeUndefined();
    expect(document.security).toEqual([{ apiKey: [] }]);
  });

  it('gives JSON-RPC errors with HTTP 200, streams as text/event-stream, REST errors by status', () => {
    const rpc = document.paths['/a2a']!.post!;
    expect(Object.keys(rpc.responses).sort()).toEqual(['200', '401', '503']);
    expect(Object.keys(rpc.responses['200']!.content!).sort()).toEqual([
      'application/json',
      'text/event-stream',
    ]);
    const cancel = document.paths['/a2a/rest/tasks/{idAction}']!.post!;
    expect(Object.keys(cancel.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '409', '415']),
    );
    expect(cancel.responses['409']!.description).toMatch(/TASK_NOT_CANCELABLE/);
    const tenant = document.paths['/a2a/rest/{tenant}/tasks']!.get!;
    expect(tenant.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'tenant', in: 'path', required: true })]),
    );
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'A2AAgentCard',
        'A2ATask',
        'A2AMessage',
        'A2AErrorStatus',
        'A2AJsonRpcRequest',
      ]),
    );
  });

  it("matches the server's real answers", async () => {
    const check = schemaChecker(document);
    // The check can fail: a task without its contextId and status is not one.
    expect(() => check('A2ATask', { id: 't' })).toThrow(/contextId/);
    const url = s.transport.url;
    const headers = { 'x-api-key': ALICE, 'a2a-version': '1.0' };
    const statuses = (path: string, method: string): string[] =>
      Object.keys((document.paths[path] as Json)[method].responses as Json);

    const card = await rawRequest(`${url}/.well-known/agent-card.json`);
    check('A2AAgentCard', card.json);
    const again = await rawRequest(`${url}/.well-known/agent-card.json`, {
      headers: { 'if-none-match': card.headers.etag! },
    });
    expect(statuses('/.well-known/agent-card.json', 'get')).toContain(String(again.status));

    const request = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: userMessage('hello') },
    };
    check('A2AJsonRpcRequest', request);
    const sent = await rawRequest(`${url}/a2a`, { method: 'POST', headers, body: request });
    expect(sent.status).toBe(200);
    check('A2AJsonRpcResponse', sent.json);
    const task = (sent.json as Json).result.task as Json;
    check('A2ATask', task);

    const unknown = await rawRequest(`${url}/a2a`, {
      method: 'POST',
      headers,
      body: { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'nope' } },
    });
    expect(unknown.status).toBe(200);
    check('A2AJsonRpcResponse', unknown.json);
    expect((unknown.json as Json).error.code).toBe(-32001);

    const refused = await rawRequest(`${url}/a2a`, { method: 'POST', body: request });
    expect(refused.status).toBe(401);
    check('A2AErrorStatus', refused.json);

    const streamed = await rawRequest(`${url}/a2a`, {
      method: 'POST',
      headers,
      body: { ...request, method: 'SendStreamingMessage', params: { message: userMessage('hi') } },
    });
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    for (const frame of sseData(streamed.text)) check('A2AJsonRpcStreamResponse', frame);

    const got = await rawRequest(`${url}/a2a/rest/tasks/${task.id as string}?historyLength=1`, { headers });
    expect(got.status).toBe(200);
    check('A2ATask', got.json);
    const listed = await rawRequest(`${url}/a2a/rest/tasks`, { headers });
    check('A2AListTasksResponse', listed.json);

    const missing = await rawRequest(`${url}/a2a/rest/tasks/nope:cancel`, { method: 'POST', headers });
    expect(statuses('/a2a/rest/tasks/{idAction}', 'post')).toContain(String(missing.status));
    check('A2AErrorStatus', missing.json);
    const finished = await rawRequest(`${url}/a2a/rest/tasks/${task.id as string}:cancel`, {
      method: 'POST',
      headers,
    });
    expect(statuses('/a2a/rest/tasks/{idAction}', 'post')).toContain(String(finished.status));
    check('A2AErrorStatus', finished.json);

    const restStream = await rawRequest(`${url}/a2a/rest/message:stream`, {
      method: 'POST',
      headers,
      body: { message: userMessage('art one') },
    });
    expect(restStream.headers['content-type']).toBe('text/event-stream');
    const frames = sseData(restStream.text);
    expect(frames.length).toBeGreaterThan(1);
    for (const frame of frames) check('A2AStreamResponse', frame);

    const config = await rawRequest(`${url}/a2a/rest/tasks/${task.id as string}/pushNotificationConfigs`, {
      headers,
    });
    check('A2AListTaskPushNotificationConfigsResponse', config.json);
  });
});

describe('A2AServer in the OpenAPI document, other paths and no authenticator', () => {
  it('follows jsonRpcPath and restPath', async () => {
    const s = await start('http://127.0.0.1:0', { jsonRpcPath: '/rpc', restPath: '/v1' }, false);
    try {
      const document = s.transport.openapiDocument();
      await expectValid(document);
      expect(undocumented(document)).toEqual([]);
      expect(describedA2A(document)).toEqual(served(s.endpoints, ''));
      expect(document.paths['/rpc']!.post!.operationId).toBe('a2a_jsonrpc');
      expect(document.paths['/v1/{tenant}/extendedAgentCard']!.get!.operationId).toBe(
        'a2a_rest_tenant_get_extended_agent_card',
      );
      expect(document.security).toBeUndefined();
    } finally {
      await s.stop();
    }
  });
});
