/** Exchange endpoints: own answers (errors, headers, bodies), the pipeline's open step and error policy. */
import type { ServerResponse } from 'node:http';
import { APIKeyAuth } from '@agent/auth';
import { ValueError, type AgentError } from '@agent/core';
import type { ServerCall } from '@agent/server';
import { writeJson } from '@agent/server/node';
import { RecordingLogger } from '@agent/server/testing';
import { rawRequest } from '@agent/test-support';
import type { HttpEndpoint } from './backend.js';
import { exchangeEndpoint, type ExchangeInput } from './exchange-endpoint.js';
import { HTTPTransport } from './http-transport.js';
import type { HttpRouteContext, HttpRoutes } from './json-endpoint.js';
import type { BackendName } from './options.js';

const KEY = 'sk-exchange-owner-0123';

/** A protocol with its own error shape: `{"problem": code}` and a header saying who refused. */
function refuse(res: ServerResponse, error: AgentError): void {
  writeJson(res, error.httpStatus, { problem: error.code }, { 'x-refused-by': 'own-protocol' });
}

class OwnProtocol implements HttpRoutes {
  bodies: unknown[] = [];
  context: HttpRouteContext | undefined;
  endpoints(context: HttpRouteContext): HttpEndpoint[] {
    this.context = context;
    return [
      exchangeEndpoint(
        {
          method: 'GET',
          path: '/public/doc.json',
          operation: 'get_doc',
          authenticate: false,
          refuse,
          serve: (call, { res }) => writeJson(res, 200, { secured: call.security !== undefined }),
        },
        context,
      ),
      exchangeEndpoint(
        {
          method: 'POST',
          path: '/own/{name}',
          operation: 'own_call',
          deferTenant: true,
          refuse,
          serve: (call: ServerCall, input: ExchangeInput) => {
            input.readBody((error, body) => {
              if (error) return refuse(input.res, context.pipeline.wireError(error, 'own_call', call));
              this.bodies.push(body);
              const tenant = (body as { tenant?: string }).tenant;
              let scoped: ServerCall;
              try {
                scoped = context.pipeline.scope(call, tenant);
              } catch (e) {
                return refuse(input.res, e as AgentError);
              }
              writeJson(input.res, 200, {
                name: input.params.name,
                tenant: scoped.tenant,
                principal: scoped.owner.principal_id,
              });
            });
          },
        },
        context,
      ),
      exchangeEndpoint(
        {
          method: 'GET',
          path: '/own-broken',
          operation: 'own_broken',
          refuse,
          serve: () => {
            throw new Error('secret detail at 10.1.2.3');
          },
        },
        context,
      ),
    ];
  }
}

describe.each<BackendName>(['node', 'express'])('exchangeEndpoint (%s backend)', (backend) => {
  let transport: HTTPTransport;
  let routes: OwnProtocol;
  let logger: RecordingLogger;
  let base: string;

  beforeEach(async () => {
    routes = new OwnProtocol();
    logger = new RecordingLogger();
    const authenticator = new APIKeyAuth({ validKeys: { [KEY]: [] }, tenants: { [KEY]: ['t1', ''] } });
    transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      backend,
      authenticator,
      routes: [routes],
      logger,
    });
    transport.onTaskReceived(async (task) => ({ ...task, state: 'completed' }));
    await transport.start();
    base = transport.url;
  });

  afterEach(() => transport.stop());

  it('serves a public endpoint without credentials, with no security context', async () => {
    const response = await rawRequest(`${base}/public/doc.json`);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ secured: false });
  });

  it('refuses a missing credential in its own shape before reading the body', async () => {
    const response = await rawRequest(`${base}/own/x`, { body: { tenant: 't1' } });
    expect(response.status).toBe(401);
    expect(response.headers['x-refused-by']).toBe('own-protocol');
    expect(response.json).toEqual({ problem: 'UNAUTHENTICATED' });
    expect(routes.bodies).toEqual([]);
  });

  it('defers the tenant to the body and checks it there', async () => {
    const ok = await rawRequest(`${base}/own/n%20a`, {
      headers: { 'x-api-key': KEY },
      body: { tenant: 't1' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ name: 'n a', tenant: 't1' });
    const denied = await rawRequest(`${base}/own/x`, {
      headers: { 'x-api-key': KEY },
      body: { tenant: 't2' },
    });
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({ problem: 'PERMISSION_DENIED' });
  });

  it('answers a throwing endpoint through the error policy, masked and logged', async () => {
    const response = await rawRequest(`${base}/own-broken`, { headers: { 'x-api-key': KEY } });
    expect(response.status).toBe(500);
    expect(response.json).toEqual({ problem: 'INTERNAL' });
    expect(response.text).not.toContain('10.1.2.3');
    expect(
      JSON.stringify(logger.lines.map((l) => String((l.fields.err as Error | undefined)?.message))),
    ).toContain('10.1.2.3');
  });

  it('refuses new calls while the server stops, public ones included', async () => {
    routes.context!.pipeline.beginStop();
    const response = await rawRequest(`${base}/public/doc.json`);
    expect(response.status).toBe(503);
    expect(response.json).toEqual({ problem: 'UNAVAILABLE' });
  });
});

it('exchangeEndpoint refuses a spec that is not one', () => {
  const context = { basePath: '', maxBodyBytes: 1, pipeline: {} } as unknown as HttpRouteContext;
  const base = {
    method: 'GET',
    path: '/x',
    operation: 'x',
    refuse: () => undefined,
    serve: () => undefined,
  } as const;
  expect(() => exchangeEndpoint({ ...base, method: 'PATCH' as 'GET' }, context)).toThrow(ValueError);
  expect(() => exchangeEndpoint({ ...base, path: 'x' }, context)).toThrow(ValueError);
  expect(() => exchangeEndpoint({ ...base, operation: '' }, context)).toThrow(ValueError);
  expect(() => exchangeEndpoint({ ...base, serve: undefined as never }, context)).toThrow(ValueError);
});
