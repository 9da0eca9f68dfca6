import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { ERROR_CODE_METADATA } from './grpc-errors.js';
import { API_KEY, apiKeyAuth, Harness } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

const GARBAGE = Buffer.from([0xff, 0xff, 0xff]);
const identity = (value: Buffer): Buffer => value;

type Method = 'Invoke' | 'Stream' | 'Subscribe';
const METHODS: Method[] = ['Invoke', 'Stream', 'Subscribe'];
const REQUEST_MESSAGE: Record<Method, string> = {
  Invoke: 'InvokeRequest',
  Stream: 'InvokeRequest',
  Subscribe: 'SubscribeRequest',
};

/** Sends raw bytes as the request message, bypassing the generated serializer. */
function sendRaw(url: string, method: Method, metadata: Metadata): Promise<ServiceError> {
  const client = new Client(url.replace('grpc://', ''), credentials.createInsecure());
  const path = `/agent.v1.AgentService/${method}`;
  return new Promise<ServiceError>((resolve, reject) => {
    const settle = (error: ServiceError | null): void => {
      client.close();
      if (error) resolve(error);
      else reject(new Error(`${method} with an undecodable body succeeded`));
    };
    if (method === 'Invoke') {
      client.makeUnaryRequest(path, identity, identity, GARBAGE, metadata, (error) => settle(error));
    } else {
      const call = client.makeServerStreamRequest(path, identity, identity, GARBAGE, metadata);
      call.on('data', () => undefined);
      call.on('error', (error: ServiceError) => settle(error));
      call.on('end', () => settle(null));
    }
  });
}

function withKey(): Metadata {
  const metadata = new Metadata();
  metadata.set('x-api-key', API_KEY);
  return metadata;
}

describe('GRPCTransport: an undecodable request body', () => {
  it.each(METHODS)('%s without credentials is UNAUTHENTICATED, not a decode failure', async (method) => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const error = await sendRaw(url, method, new Metadata());
    expect(error.code).toBe(status.UNAUTHENTICATED);
    expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['UNAUTHENTICATED']);
    expect(handler.contexts).toHaveLength(0);
  });

  it.each(METHODS)('%s with valid credentials is INVALID_ARGUMENT / INVALID_REQUEST', async (method) => {
    const { url, handler } = await harness.server({ authenticator: apiKeyAuth() });
    const error = await sendRaw(url, method, withKey());
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['INVALID_REQUEST']);
    expect(error.details).toMatch(
      new RegExp(
        `^Request body is not a valid agent\\.v1\\.${REQUEST_MESSAGE[method]}: the message is truncated`,
      ),
    );
    expect(handler.contexts).toHaveLength(0);
  });

  it.each(METHODS)('%s without an authenticator is INVALID_ARGUMENT', async (method) => {
    const { url, handler } = await harness.server();
    const error = await sendRaw(url, method, new Metadata());
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['INVALID_REQUEST']);
    expect(handler.contexts).toHaveLength(0);
  });
});
