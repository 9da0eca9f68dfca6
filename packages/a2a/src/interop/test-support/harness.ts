/**
 * The interop harness: our server (HTTPTransport + A2AServer over a configurable test agent) on a
 * free loopback port, with authentication off, by API key or by bearer token; the official SDK's
 * client (`@a2a-js/sdk` 1.3.0) pointed at it as a given principal; and raw HTTP helpers for the
 * cases that must look at exact bytes.
 */
import { randomUUID } from 'node:crypto';
import { APIKeyAuth, BearerTokenAuth, type Authenticator } from '@agent/auth';
import { mintJwt } from '@agent/auth/testing';
import { RecordingLogger } from '@agent/server/testing';
import { HTTPTransport } from '@agent/transport-http';
import { createMessage } from '@agent/core';
import {
  createTestAgent,
  rawRequest,
  type RawResponse,
  type TestAgent,
  type TestAgentOptions,
} from '@agent/test-support';
import {
  SendMessageRequest,
  TaskState,
  type Message as SdkMessage,
  type StreamResponse,
  type Task as SdkTask,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import { A2AServer, type A2AServerOptions } from '../../server/a2a-server.js';

export type AuthMode = 'none' | 'apiKey' | 'bearer';
export type Binding = 'JSONRPC' | 'HTTP+JSON';
/** alice and bob: two principals with every tenant; carol: only tenant `t1`. */
export type Who = 'alice' | 'bob' | 'carol';

export const AUTH_MODES: AuthMode[] = ['none', 'apiKey', 'bearer'];
export const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON'];

const KEYS: Record<Who, string> = {
  alice: 'sk-interop-alice-0123456789',
  bob: 'sk-interop-bob-0123456789',
  carol: 'sk-interop-carol-0123456789',
};
const JWT_SECRET = 'interop-secret-0123456789abcdef0123456789';

function authenticatorFor(mode: AuthMode): Authenticator | undefined {
  if (mode === 'apiKey') {
    return new APIKeyAuth({
      validKeys: { [KEYS.alice]: [], [KEYS.bob]: [], [KEYS.carol]: [] },
      principals: { [KEYS.alice]: 'alice', [KEYS.bob]: 'bob', [KEYS.carol]: 'carol' },
      tenants: { [KEYS.carol]: ['t1'] },
    });
  }
  if (mode === 'bearer') return new BearerTokenAuth({ secret: JWT_SECRET });
  return undefined;
}

/** A fresh bearer token for a principal (carol's carries the `tenants: ['t1']` claim). */
export function bearerToken(who: Who): string {
  const claims: Record<string, unknown> = { sub: who, exp: Math.floor(Date.now() / 1000) + 3600 };
  if (who === 'carol') claims.tenants = ['t1'];
  return mintJwt({ secret: JWT_SECRET, claims });
}

export interface InteropServerOptions {
  auth: AuthMode;
  a2a?: A2AServerOptions;
  agent?: TestAgentOptions;
}

export interface InteropServer {
  readonly auth: AuthMode;
  /** The transport's base URL (the card is at `${url}/.well-known/agent-card.json`). */
  readonly url: string;
  readonly jsonRpcUrl: string;
  readonly restUrl: string;
  readonly agent: TestAgent;
  readonly logger: RecordingLogger;
  /** The headers that authenticate a principal (`{}` with auth off). */
  headers(who: Who): Record<string, string>;
  close(): Promise<void>;
}

/**
 * The agent's commands (the last message's first word): `echo <text>` completes with one artifact
 * per word and the reply; `hold` waits until canceled or released; `sleep <ms>`; `stream <n>`;
 * `ask <text>` stops in input-required (the next message continues the task).
 */
export function interopAgent(options: TestAgentOptions = {}): TestAgent {
  return createTestAgent({
    detached: true,
    echoStream: 'artifacts',
    commandFrom: 'last',
    sleepProgress: false,
    ...options,
    commands: {
      // eslint-disable-next-line require-yield
      async *ask(run) {
        run.task.messages.push(createMessage(`need more: ${run.args}`, { role: 'agent' }));
        return { ...run.task, state: 'input-required' };
      },
      ...options.commands,
    },
  });
}

export async function startInterop(options: InteropServerOptions): Promise<InteropServer> {
  const agent = interopAgent(options.agent);
  const logger = new RecordingLogger();
  const authenticator = authenticatorFor(options.auth);
  const a2a = new A2AServer(options.a2a);
  const transport = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    ...(authenticator ? { authenticator } : {}),
    routes: [a2a],
    logger,
    stopGraceMs: 200,
  });
  transport.bind(agent);
  await transport.start();
  const url = transport.url.replace(/\/+$/, '');
  return {
    auth: options.auth,
    url,
    jsonRpcUrl: `${url}${options.a2a?.jsonRpcPath ?? '/a2a'}`,
    restUrl: `${url}${options.a2a?.restPath ?? '/a2a/rest'}`,
    agent,
    logger,
    headers(who): Record<string, string> {
      if (options.auth === 'apiKey') return { 'X-API-Key': KEYS[who] };
      if (options.auth === 'bearer') return { Authorization: `Bearer ${bearerToken(who)}` };
      return {};
    },
    async close() {
      agent.cancelAll();
      await transport.stop();
      await a2a.close();
    },
  };
}

export interface SdkClientOptions {
  binding?: Binding;
  /** How credentials travel: a call interceptor's serviceParameters (default) or an authenticating fetch. */
  carrier?: 'interceptor' | 'fetch';
  /** No credentials at all. */
  anonymous?: boolean;
}

/** The official SDK client for a principal, created from our public card (`createFromUrl`). */
export async function sdkClient(
  server: InteropServer,
  who: Who,
  options: SdkClientOptions = {},
): Promise<Client> {
  const binding = options.binding ?? 'JSONRPC';
  const headers = options.anonymous ? {} : server.headers(who);
  const carrier = options.carrier ?? 'interceptor';
  const fetchImpl =
    carrier === 'fetch'
      ? createAuthenticatingFetchWithRetry(fetch, {
          headers: async () => headers,
          shouldRetryWithHeaders: async () => undefined,
        })
      : undefined;
  const transports =
    binding === 'JSONRPC'
      ? [new JsonRpcTransportFactory(fetchImpl ? { fetchImpl } : undefined)]
      : [new RestTransportFactory(fetchImpl ? { fetchImpl } : undefined)];
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports,
      preferredTransports: [binding],
      clientConfig:
        carrier === 'interceptor'
          ? {
              interceptors: [
                {
                  async before(args) {
                    args.options = {
                      ...args.options,
                      serviceParameters: { ...args.options?.serviceParameters, ...headers },
                    };
                  },
                  async after() {
                    return undefined;
                  },
                },
              ],
            }
          : {},
    }),
  );
  return factory.createFromUrl(server.url);
}

export interface MessageInit {
  taskId?: string;
  contextId?: string;
  tenant?: string;
  returnImmediately?: boolean;
  historyLength?: number;
  messageId?: string;
}

/** A SendMessageRequest with one user text part. */
export function userMessage(text: string, init: MessageInit = {}): SendMessageRequest {
  const message: Record<string, unknown> = {
    messageId: init.messageId ?? randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
  };
  if (init.taskId) message.taskId = init.taskId;
  if (init.contextId) message.contextId = init.contextId;
  const json: Record<string, unknown> = { message };
  if (init.tenant) json.tenant = init.tenant;
  const configuration: Record<string, unknown> = {};
  if (init.returnImmediately) configuration.returnImmediately = true;
  if (init.historyLength !== undefined) configuration.historyLength = init.historyLength;
  if (Object.keys(configuration).length > 0) json.configuration = configuration;
  return SendMessageRequest.fromJSON(json);
}

export function isSdkTask(result: SdkTask | SdkMessage): result is SdkTask {
  return 'status' in result && !('messageId' in result);
}

/** The Task a SendMessage answered (fails the test when it answered a Message). */
export function asTask(result: SdkTask | SdkMessage): SdkTask {
  if (!isSdkTask(result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  return result;
}

export async function collect(events: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The payload kinds of a stream, in order (`task`, `statusUpdate`, ...). */
export function kinds(events: StreamResponse[]): string[] {
  return events.map((event) => event.payload?.$case ?? 'none');
}

/** The states of the stream's status updates (and task snapshots), in order. */
export function states(events: StreamResponse[]): TaskState[] {
  const out: TaskState[] = [];
  for (const event of events) {
    const payload = event.payload;
    if (payload?.$case === 'statusUpdate' && payload.value.status) out.push(payload.value.status.state);
    if (payload?.$case === 'task' && payload.value.status) out.push(payload.value.status.state);
  }
  return out;
}

export const TERMINAL_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
];

/** Polls GetTask until the task is terminal (or the deadline passes). */
export async function waitForTerminal(
  client: Client,
  id: string,
  tenant = '',
  deadlineMs = 5000,
): Promise<SdkTask> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const task = await client.getTask({ tenant, id, historyLength: undefined });
    if (TERMINAL_STATES.includes(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) return task;
    if (Date.now() > until) throw new Error(`task ${id} not terminal after ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// -----------------------------------------------------------------------------------------------
// Raw HTTP

export const VERSION_HEADER = { 'A2A-Version': '1.0' };

export interface RawRpcOptions {
  headers?: Record<string, string>;
  /** The JSON-RPC id. Default 1. */
  id?: unknown;
  /** Send no A2A-Version header. */
  noVersion?: boolean;
  accept?: string;
}

/** One raw JSON-RPC call to the server's JSON-RPC binding. */
export function rawRpc(
  server: InteropServer,
  method: string,
  params: unknown,
  options: RawRpcOptions = {},
): Promise<RawResponse> {
  const body = { jsonrpc: '2.0', id: options.id === undefined ? 1 : options.id, method, params };
  return rawRequest(server.jsonRpcUrl, {
    method: 'POST',
    headers: {
      ...(options.noVersion ? {} : VERSION_HEADER),
      ...(options.accept ? { accept: options.accept } : {}),
      ...options.headers,
    },
    body,
  });
}

export interface RawRestOptions {
  headers?: Record<string, string>;
  body?: unknown;
  noVersion?: boolean;
  accept?: string;
}

/** One raw call to the HTTP+JSON binding; `path` starts with `/` (tenant prefix included when wanted). */
export function rawRest(
  server: InteropServer,
  method: 'GET' | 'POST' | 'DELETE' | 'PUT',
  path: string,
  options: RawRestOptions = {},
): Promise<RawResponse> {
  return rawRequest(`${server.restUrl}${path}`, {
    method,
    headers: {
      ...(options.noVersion ? {} : VERSION_HEADER),
      ...(options.accept ? { accept: options.accept } : {}),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

/** The `data:` payloads of an SSE body, parsed. */
export function sseData(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/).filter((line) => line.startsWith('data:'));
    if (lines.length === 0) continue;
    out.push(JSON.parse(lines.map((line) => line.slice(5).replace(/^ /, '')).join('\n')));
  }
  return out;
}

export interface ErrorInfo {
  '@type': string;
  reason: string;
  domain: string;
  metadata?: Record<string, string>;
}

export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

export interface RpcError {
  code: number;
  message: string;
  data?: unknown[];
}

/** The JSON-RPC error object of a raw response (throws when it has none). */
export function rpcError(response: RawResponse): RpcError {
  const json = response.json as { error?: RpcError } | undefined;
  if (!json?.error) throw new Error(`no JSON-RPC error in ${response.status} ${response.text}`);
  return json.error;
}

/** Replaces every occurrence of an id in a raw body, so two refusals can be compared byte for byte. */
export function withoutId(text: string, id: string): string {
  return text.split(id).join('<ID>');
}

export interface ListInit {
  tenant?: string;
  contextId?: string;
  status?: TaskState;
  pageSize?: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** A ListTasksRequest with the proto defaults filled in. */
export function listRequest(init: ListInit = {}): Parameters<Client['listTasks']>[0] {
  const request: Parameters<Client['listTasks']>[0] = {
    tenant: init.tenant ?? '',
    contextId: init.contextId ?? '',
    status: init.status ?? TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: init.pageToken ?? '',
    statusTimestampAfter: undefined,
  };
  if (init.pageSize !== undefined) request.pageSize = init.pageSize;
  if (init.historyLength !== undefined) request.historyLength = init.historyLength;
  if (init.includeArtifacts !== undefined) request.includeArtifacts = init.includeArtifacts;
  return request;
}

/** The text of every text part of a message or artifact part list. */
export function texts(parts: Array<{ content?: { $case: string; value: unknown } }> | undefined): string[] {
  return (parts ?? []).flatMap((part) =>
    part.content?.$case === 'text' ? [String(part.content.value)] : [],
  );
}

/** Runs a call that must fail and returns its error. */
export async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** The A2A code an SDK error carries: the JSON-RPC code, or the code its REST class stands for. */
export function sdkCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const record = error as { envelopeCode?: unknown; code?: unknown };
  if (typeof record.envelopeCode === 'number') return record.envelopeCode;
  if (typeof record.code === 'number') return record.code;
  return undefined;
}
