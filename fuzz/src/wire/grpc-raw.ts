/**
 * gRPC calls whose request and response bodies stay bytes: @grpc/grpc-js with a pass-through
 * serializer, so a malformed protobuf reaches the server exactly as generated.
 */
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';

export const AGENT_SERVICE = 'agent.v1.AgentService';

export interface GrpcAnswer {
  /** The gRPC status code (0 OK). */
  code: number;
  codeName: string;
  details: string;
  /** Trailing (and, for errors, response) metadata as text. */
  metadata: Record<string, string>;
  /** Response messages (one for a unary call). */
  messages: Buffer[];
  elapsedMs: number;
}

const passThrough = (b: Buffer): Buffer => b;

export function codeName(code: number): string {
  return (status as unknown as Record<number, string>)[code] ?? String(code);
}

function metadataRecord(md: Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!md) return out;
  for (const [k, v] of Object.entries(md.getMap())) out[k] = Buffer.isBuffer(v) ? v.toString('base64') : v;
  return out;
}

export function grpcTarget(url: string): string {
  return url.replace(/^grpcs?:\/\//, '');
}

/** One client per target; `grpc.use_local_subchannel_pool` keeps each its own connection. */
export function grpcClient(url: string, ownConnection = false): Client {
  return new Client(grpcTarget(url), credentials.createInsecure(), {
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
    ...(ownConnection ? { 'grpc.use_local_subchannel_pool': 1 } : {}),
  });
}

export function toMetadata(pairs: Array<[string, string | Buffer]>): Metadata {
  const md = new Metadata();
  for (const [k, v] of pairs) md.add(k, v);
  return md;
}

export function grpcUnary(
  client: Client,
  method: string,
  body: Buffer,
  md: Metadata,
  timeoutMs: number,
): Promise<GrpcAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    let trailers: Metadata | undefined;
    const call = client.makeUnaryRequest(
      `/${AGENT_SERVICE}/${method}`,
      passThrough,
      passThrough,
      body,
      md,
      { deadline: Date.now() + timeoutMs },
      (error: ServiceError | null, response?: Buffer) => {
        const code = error ? error.code : status.OK;
        resolve({
          code,
          codeName: codeName(code),
          details: error ? error.details : '',
          metadata: metadataRecord(error ? error.metadata : trailers),
          messages: response ? [response] : [],
          elapsedMs: Date.now() - started,
        });
      },
    );
    call.on('status', (s: { metadata: Metadata }) => (trailers = s.metadata));
  });
}

export function grpcServerStream(
  client: Client,
  method: string,
  body: Buffer,
  md: Metadata,
  timeoutMs: number,
): Promise<GrpcAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const messages: Buffer[] = [];
    const call = client.makeServerStreamRequest(
      `/${AGENT_SERVICE}/${method}`,
      passThrough,
      passThrough,
      body,
      md,
      {
        deadline: Date.now() + timeoutMs,
      },
    );
    call.on('data', (m: Buffer) => messages.push(m));
    call.on('error', () => undefined);
    call.on('status', (s: { code: number; details: string; metadata: Metadata }) =>
      resolve({
        code: s.code,
        codeName: codeName(s.code),
        details: s.details,
        metadata: metadataRecord(s.metadata),
        messages,
        elapsedMs: Date.now() - started,
      }),
    );
  });
}
