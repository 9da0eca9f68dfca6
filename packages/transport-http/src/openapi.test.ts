/**
 * The OpenAPI document cannot drift: it is valid OpenAPI 3.1 (checked by a maintained validator),
 * and it lists exactly the routes the backends are given plus the host's probes, each described,
 * each answering on a real socket.
 */
import { compileErrors, validate } from '@readme/openapi-parser';
import { APIKeyAuth, BasicAuth, BearerTokenAuth, type Authenticator } from '@agent/auth';
import { ValueError } from '@agent/core';
import { InMemoryApprovalStore } from '@agent/events';
import { createTestAgent, rawRequest } from '@agent/test-support';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { ExpressBackend } from './express-backend.js';
import { HTTPTransport } from './http-transport.js';
import {
  approvalRoutes,
  jsonEndpoint,
  type HTTPTransportOptions,
  type HttpRoutes,
  type OpenApiDocument,
} from './index.js';
import { NodeBackend } from './node-backend.js';
import { HOST_PATHS, localPath } from './openapi-document.js';

const KEY = 'sk-openapi-0123456789';
const BACKENDS = {
  node: (options: BackendOptions) => new NodeBackend(options),
  express: (options: BackendOptions) => new ExpressBackend(options),
} as const;

/** Serves through a built-in backend and keeps the route table it was given. */
function recording(name: keyof typeof BACKENDS): {
  factory: (o: BackendOptions) => HttpBackend;
  table: () => readonly HttpEndpoint[];
} {
  let table: readonly HttpEndpoint[] = [];
  return {
    factory: (options) => {
      const inner = BACKENDS[name](options);
      return {
        setupRoutes: (endpoints) => {
          table = endpoints;
          inner.setupRoutes(endpoints);
        },
        start: (host, port) => inner.start(host, port),
        stop: () => inner.stop(),
      };
    },
    table: () => table,
  };
}

async function started(
  options: Omit<HTTPTransportOptions, 'url'> & { url?: string },
): Promise<HTTPTransport> {
  const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', ...options });
  transport.bind(createTestAgent({ announceWorking: false }));
  await transport.start();
  return transport;
}

async function expectValid(document: OpenApiDocument): Promise<void> {
  // The validator dereferences in place: give it a copy.
  const result = await validate(structuredClone(document) as never);
  if (!result.valid) throw new Error(compileErrors(result));
}

/** `METHOD /path` of every operation of the document. */
function documented(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe.each(['node', 'express'] as const)('the OpenAPI document on the %s backend', (backend) => {
  let transport: HTTPTransport;
  let table: () => readonly HttpEndpoint[];

  beforeAll(async () => {
    const recorder = recording(backend);
    table = recorder.table;
    transport = await started({
      url: 'http://127.0.0.1:0/agents/a',
      backend: recorder.factory,
      authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
      routes: [approvalRoutes(new InMemoryApprovalStore())],
    });
  });
  afterAll(() => transport.stop());

  it('is valid OpenAPI 3.1, served at GET /openapi.json behind the authenticator', async () => {
    const refused = await rawRequest(`${transport.url}/openapi.json`);
    expect(refused.status).toBe(401);
    const served = await rawRequest(`${transport.url}/openapi.json`, { headers: { 'x-api-key': KEY } });
    expect(served.status).toBe(200);
    const document = served.json as OpenApiDocument;
    expect(document).toEqual(transport.openapiDocument());
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: transport.url }]);
    await expectValid(document);
  });

  it('lists exactly the routes the backend serves and the host probes, every one described', () => {
    const document = transport.openapiDocument();
    const served = [
      ...table().map((endpoint) => `${endpoint.method} ${localPath(endpoint.path, '/agents/a')}`),
      ...HOST_PATHS.map((path) => `GET ${path}`),
    ];
    expect(documented(document).sort()).toEqual([...new Set(served)].sort());
    const undescribed = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation['x-undocumented'] === true)
        .map(([method]) => `${method} ${path}`),
    );
    expect(undescribed).toEqual([]);
  });

  it('answers every documented operation on its route (401 before auth, probes public)', async () => {
    const document = transport.openapiDocument();
    const answers: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const concrete = path.replace(/\{[^}]+\}/g, 'x');
        const response = await rawRequest(`${transport.url}${concrete}`, {
          method: method.toUpperCase(),
          ...(method === 'post' || method === 'put' ? { body: {} } : {}),
        });
        const secured = operation.security === undefined;
        answers.push(
          `${method} ${path} ${secured ? response.status === 401 : response.status < 400 || response.status === 503}`,
        );
      }
    }
    expect(answers.filter((answer) => answer.endsWith('false'))).toEqual([]);
  });

  it('carries the wire schemas, the error table statuses and the API key scheme', () => {
    const document = transport.openapiDocument();
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Task',
        'Message',
        'Part',
        'AgentCard',
        'TaskEvent',
        'ErrorBody',
        'ApprovalRecord',
      ]),
    );
    expect(document.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(document.security).toEqual([{ apiKey: [] }]);
    const cancel = document.paths['/tasks/cancel']!.post!;
    expect(Object.keys(cancel.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '422',
      '500',
      '503',
      'default',
    ]);
    expect(cancel.responses['409']!.description).toBe('TASK_NOT_CANCELABLE');
    expect(document.paths['/healthz']!.get!.security).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it.each<[string, Authenticator | undefined]>([
    ['no authenticator', undefined],
    ['Basic', new BasicAuth({ validCredentials: { alice: 'secret-password-1' } })],
    ['bearer JWT', new BearerTokenAuth({ secret: 'a-secret-of-at-least-32-bytes-long!!' })],
  ])('is valid with %s', async (_name, authenticator) => {
    const transport = await started(authenticator ? { authenticator } : {});
    try {
      const document = transport.openapiDocument();
      await expectValid(document);
      if (!authenticator) expect(document.security).toBeUndefined();
      else
        expect(Object.values(document.components.securitySchemes ?? {})).toEqual([
          expect.objectContaining({ type: 'http' }),
        ]);
    } finally {
      await transport.stop();
    }
  });

  it('is refused by the validator when broken (the check can fail)', async () => {
    const transport = await started({});
    try {
      const broken = structuredClone(transport.openapiDocument()) as unknown as {
        paths: Record<string, Record<string, unknown>>;
      };
      (broken.paths['/tasks/{id}']!.get as { parameters: unknown[] }).parameters.shift();
      await expect(expectValid(broken as unknown as OpenApiDocument)).rejects.toThrow(/path parameter/);
    } finally {
      await transport.stop();
    }
  });

  it("lists a route set's endpoints without a description as x-undocumented", async () => {
    const bare: HttpRoutes = {
      endpoints: (context) => [
        jsonEndpoint(
          {
            method: 'GET',
            path: '/notes/{name}',
            operation: 'get_note',
            body: false,
            run: async () => ({ body: null }),
          },
          context,
        ),
      ],
    };
    const transport = await started({ routes: [bare] });
    try {
      const document = transport.openapiDocument();
      const operation = document.paths['/notes/{name}']!.get!;
      expect(operation['x-undocumented']).toBe(true);
      await expectValid(document);
    } finally {
      await transport.stop();
    }
  });

  it("serves it without credentials with openapi: 'public', and not at all with false", async () => {
    const authenticator = new APIKeyAuth({ validKeys: { [KEY]: [] } });
    const open = await started({ authenticator, openapi: 'public' });
    const off = await started({ authenticator, openapi: false });
    try {
      expect((await rawRequest(`${open.url}/openapi.json`)).status).toBe(200);
      expect(open.openapiDocument().paths['/openapi.json']!.get!.security).toEqual([]);
      expect((await rawRequest(`${off.url}/openapi.json`, { headers: { 'x-api-key': KEY } })).status).toBe(
        404,
      );
      expect(off.openapiDocument().paths['/openapi.json']).toBeUndefined();
    } finally {
      await open.stop();
      await off.stop();
    }
  });

  it('refuses a bad openapi option, and is not there before start()', () => {
    expect(() => new HTTPTransport({ url: 'http://127.0.0.1:0', openapi: 'yes' as never })).toThrow(
      ValueError,
    );
    expect(() => new HTTPTransport({ url: 'http://127.0.0.1:0' }).openapiDocument()).toThrow(/started/);
  });

  it('fails start() when a route set takes GET /openapi.json', async () => {
    const taken: HttpRoutes = {
      endpoints: (context) => [
        jsonEndpoint(
          {
            method: 'GET',
            path: '/openapi.json',
            operation: 'mine',
            body: false,
            run: async () => ({ body: {} }),
          },
          context,
        ),
      ],
    };
    const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', routes: [taken] });
    transport.bind(createTestAgent({ announceWorking: false }));
    await expect(transport.start()).rejects.toThrow(/conflicts with GET \/openapi.json/);
    const allowed = await started({ routes: [taken], openapi: false });
    await allowed.stop();
  });
});
