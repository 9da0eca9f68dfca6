import path from 'node:path';
import { APIKeyAuth, type SecurityContext } from '@agent/auth';
import { CLIENT_OPERATIONS, isFinalEvent, UnauthenticatedError, type TaskEvent } from '@agent/core';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  status,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import * as pb from './gen/agent/v1/agent.js';
import { ERROR_CODE_METADATA } from './grpc-errors.js';
import { API_KEY, apiKeyAuth, Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

/** Counts authenticate() calls so lazy authentication can be observed. */
class CountingAuth extends APIKeyAuth {
  calls = 0;
  override async authenticate(credentials: string): Promise<SecurityContext> {
    this.calls += 1;
    return super.authenticate(credentials);
  }
}

function rawInvoke(
  url: string,
  metadata: Metadata,
): Promise<{ error: ServiceError | null; response?: pb.InvokeResponse }> {
  const client = new pb.AgentServiceClient(url.replace('grpc://', ''), credentials.createInsecure());
  return new Promise((resolve) => {
    client.invoke({ operation: { $case: 'getAgentCard', value: {} } }, metadata, (error, response) => {
      client.close();
      resolve({ error, response });
    });
  });
}

type UnaryMethod = (
  request: object,
  callback: (error: ServiceError | null, response: Record<string, unknown>) => void,
) => void;

function genericClient(
  protoFile: string,
  includeDir: string,
  servicePath: string[],
  address: string,
): Client & Record<string, UnaryMethod> {
  const definition = loadPackageDefinition(loadSync(protoFile, { includeDirs: [includeDir], enums: String }));
  let node: unknown = definition;
  for (const part of servicePath) node = (node as Record<string, unknown>)[part];
  const Ctor = node as new (
    address: string,
    creds: ReturnType<typeof credentials.createInsecure>,
  ) => Client & Record<string, UnaryMethod>;
  return new Ctor(address, credentials.createInsecure());
}

function healthClient(port: number): Client & Record<string, UnaryMethod> {
  return genericClient(
    healthProtoPath,
    path.dirname(healthProtoPath),
    ['grpc', 'health', 'v1', 'Health'],
    `127.0.0.1:${port}`,
  );
}

describe('GRPCTransport: authentication from lowercase metadata', () => {
  it('rejects calls without credentials with UNAUTHENTICATED before the handler runs', async () => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const client = harness.client();
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('echo x'))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      httpStatus: 401,
    });
    const streamed: TaskEvent[] = [];
    await expect(
      (async () => {
        for await (const event of client.subscribe(url, task('stream 2'))) streamed.push(event);
      })(),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(streamed).toEqual([]);
    expect(handler.contexts).toHaveLength(0);
  });

  it('answers a wrong credential with status UNAUTHENTICATED and never echoes it', async () => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const { error } = await rawInvoke(url, new Metadata({}));
    expect(error?.code).toBe(status.UNAUTHENTICATED);
    expect(error?.metadata.get(ERROR_CODE_METADATA)).toEqual(['UNAUTHENTICATED']);
    const metadata = new Metadata();
    metadata.set('x-api-key', 'wrong-key-secret');
    const wrong = await rawInvoke(url, metadata);
    expect(wrong.error?.code).toBe(status.UNAUTHENTICATED);
    expect(wrong.error?.details).toBe('Invalid API key');
    expect(wrong.error?.details).not.toContain('wrong-key-secret');
    expect(handler.contexts).toHaveLength(0);
  });

  it('accepts the key as `authorization: ApiKey …`, `authorization: Bearer …` or `x-api-key`', async () => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    for (const [key, value] of [
      ['authorization', `ApiKey ${API_KEY}`],
      ['authorization', `Bearer ${API_KEY}`],
      ['x-api-key', API_KEY],
    ] as const) {
      const metadata = new Metadata();
      metadata.set(key, value);
      const { error, response } = await rawInvoke(url, metadata);
      expect(error).toBeNull();
      expect(response?.result?.$case).toBe('agentCard');
    }
    expect(handler.contexts.map((ctx) => ctx.security?.principalId)).toEqual(
      Array(3).fill(`api-key-${API_KEY.slice(0, 8)}`),
    );
  });

  it('the client authenticates lazily once, then sends the credential as lowercase metadata', async () => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const auth = new CountingAuth({ validKeys: { [API_KEY]: [] } });
    const client = harness.client({ authenticator: auth, credentials: API_KEY });
    expect(auth.calls).toBe(0);
    await Promise.all([
      client.send(CLIENT_OPERATIONS.get_card, url),
      client.send(CLIENT_OPERATIONS.get_card, url),
    ]);
    const events: TaskEvent[] = [];
    for await (const event of client.subscribe(url, task('stream 1'))) events.push(event);
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(auth.calls).toBe(1);
    expect(handler.contexts[0]!.headers['x-api-key']).toBe(API_KEY);
    expect(handler.contexts[0]!.headers.authorization).toBe(`ApiKey ${API_KEY}`);
    expect(handler.contexts[0]!.security?.token).toBe(API_KEY);
  });

  it('a credential the client cannot authenticate fails locally with UnauthenticatedError, not leaking it', async () => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const client = harness.client({ authenticator: apiKeyAuth(), credentials: 'not-a-valid-key' });
    const failure = client.send(CLIENT_OPERATIONS.get_card, url);
    await expect(failure).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(failure).rejects.toThrow('Client authentication failed: Invalid API key');
    expect(handler.contexts).toHaveLength(0);
  });

  it('authenticate() obtains the context up front and later calls use it', async () => {
    const { url } = await harness.server({ authenticator: apiKeyAuth() });
    const client = harness.client({ authenticator: apiKeyAuth() });
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).rejects.toBeInstanceOf(UnauthenticatedError);
    const context = await client.authenticate(API_KEY);
    expect(context.token).toBe(API_KEY);
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).resolves.toMatchObject({ name: 'demo' });
    await expect(client.authenticate('bad')).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});

describe('GRPCTransport: health and reflection bypass the authenticator', () => {
  it('grpc.health.v1 Check answers SERVING without credentials', async () => {
    const { server } = await harness.server({ authenticator: apiKeyAuth(), health: true });
    const health = healthClient(server.port);
    try {
      const check = (service: string) =>
        new Promise<{ error: ServiceError | null; response: Record<string, unknown> }>((resolve) =>
          health.Check!({ service }, (error, response) => resolve({ error, response })),
        );
      expect((await check('')).response).toEqual({ status: 'SERVING' });
      expect((await check('agent.v1.AgentService')).response).toEqual({ status: 'SERVING' });
      expect((await check('nope')).error?.code).toBe(status.NOT_FOUND);
    } finally {
      health.close();
    }
  });

  it('grpc.health.v1 answers NOT_SERVING while a stop drains in-flight calls', async () => {
    const { server, url, handler } = await harness.server({ health: true, stopGraceMs: 60_000 });
    const health = healthClient(server.port);
    try {
      const held = task('hold');
      const running = handler.whenRunning(held.id);
      const unary = harness.client().send(CLIENT_OPERATIONS.send_task, url, held);
      await running;
      const stopping = server.stop();
      const answer = await new Promise<Record<string, unknown>>((resolve, reject) =>
        health.Check!({ service: '' }, (error, response) => (error ? reject(error) : resolve(response))),
      );
      expect(answer).toEqual({ status: 'NOT_SERVING' });
      handler.release(held.id);
      await expect(unary).resolves.toMatchObject({ state: 'completed' });
      await stopping;
    } finally {
      health.close();
    }
  });

  it('health is off unless asked for', async () => {
    const { server } = await harness.server();
    const health = healthClient(server.port);
    try {
      const error = await new Promise<ServiceError | null>((resolve) =>
        health.Check!({ service: '' }, (e) => resolve(e)),
      );
      expect(error?.code).toBe(status.UNIMPLEMENTED);
    } finally {
      health.close();
    }
  });

  it('server reflection lists the services without credentials', async () => {
    const { server } = await harness.server({ authenticator: apiKeyAuth(), health: true, reflection: true });
    const reflectionDir = path.join(
      path.dirname(require.resolve('@grpc/reflection/package.json')),
      'build/proto',
    );
    const reflection = genericClient(
      'grpc/reflection/v1/reflection.proto',
      reflectionDir,
      ['grpc', 'reflection', 'v1', 'ServerReflection'],
      `127.0.0.1:${server.port}`,
    );
    try {
      type ReflectionReply = {
        listServicesResponse?: { service: Array<{ name: string }> };
        fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
      };
      const ask = (request: object) =>
        new Promise<ReflectionReply>((resolve, reject) => {
          const call = (
            reflection as unknown as {
              ServerReflectionInfo(): NodeJS.ReadWriteStream & { end(): void; write(m: object): boolean };
            }
          ).ServerReflectionInfo();
          call.on('data', (message: ReflectionReply) => {
            resolve(message);
            call.end();
          });
          call.on('error', reject);
          call.write(request);
        });
      const names = (await ask({ listServices: '*' })).listServicesResponse?.service.map(
        (service) => service.name,
      );
      // What `grpcurl describe agent.v1.AgentService` needs: the file descriptors of the service.
      const files =
        (await ask({ fileContainingSymbol: 'agent.v1.AgentService' })).fileDescriptorResponse
          ?.fileDescriptorProto ?? [];
      const described = files.map((file) => file.toString('latin1')).join('\n');
      expect(described).toContain('agent.v1');
      expect(described).toContain('InvokeRequest');
      expect(described).toContain('TaskStatusUpdate');
      expect(names).toEqual(expect.arrayContaining(['agent.v1.AgentService', 'grpc.health.v1.Health']));
    } finally {
      reflection.close();
    }
  });
});
