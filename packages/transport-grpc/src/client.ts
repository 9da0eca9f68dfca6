/**
 * The client side of GRPCTransport: one channel per target, unary Invoke calls with deadlines,
 * server-streamed TaskEvents, and errors rebuilt into the typed AgentErrors the server raised.
 */
import {
  AgentError,
  isFinalEvent,
  UnavailableError,
  ValueError,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { DEFAULT_JSON_LIMITS, parseTransportUrl, type JsonLimits } from '@agent/core/internal';
import { formatHostPort } from '@agent/server';
import {
  makeGenericClientConstructor,
  type CallOptions,
  type ChannelCredentials,
  type ClientOptions,
  type ClientReadableStream,
  type Metadata,
} from '@grpc/grpc-js';
import { readMessage } from './codec-reader.js';
import { decodeTaskEvent } from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { fromServiceError } from './grpc-errors.js';
import { AGENT_SERVICE_NAME } from './proto-files.js';
import { channelCredentials } from './tls.js';

/**
 * Answers are read by the bounded reader too. A server nests a Task's values at most core's
 * `maxDepth` deep counted from the Task, which sits one level (an event) or two (a task list) deeper
 * in an answer; arrays in answers are not limited (a long task history is legitimate).
 */
const RESPONSE_LIMITS: JsonLimits = {
  maxDepth: DEFAULT_JSON_LIMITS.maxDepth + 2,
  maxArrayLength: Number.MAX_SAFE_INTEGER,
};

const readTaskEvent = (bytes: Buffer): pb.TaskEvent => readMessage('TaskEvent', bytes, RESPONSE_LIMITS);

/** The generated client with the bounded reader in place of the generated response decoders. */
const BoundedAgentServiceClient = makeGenericClientConstructor(
  {
    invoke: {
      ...pb.AgentServiceService.invoke,
      responseDeserialize: (bytes: Buffer): pb.InvokeResponse =>
        readMessage('InvokeResponse', bytes, RESPONSE_LIMITS),
    },
    stream: { ...pb.AgentServiceService.stream, responseDeserialize: readTaskEvent },
    subscribe: { ...pb.AgentServiceService.subscribe, responseDeserialize: readTaskEvent },
  },
  AGENT_SERVICE_NAME,
) as unknown as new (
  address: string,
  credentials: ChannelCredentials,
  options?: Partial<ClientOptions>,
) => pb.AgentServiceClient;

export interface GrpcClientPoolOptions {
  tls?: TlsOptions;
  maxMessageBytes: number;
}

export interface CallSettings {
  metadata: Metadata;
  /** Milliseconds until the deadline; undefined or 0 for none. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

function callOptions(timeoutMs: number | undefined): Partial<CallOptions> {
  return timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs)
    ? { deadline: Date.now() + timeoutMs }
    : {};
}

/** Why a call whose signal fired ended: the signal's own reason, as an AgentError. */
function abortError(signal: AbortSignal): AgentError {
  return AgentError.from(signal.reason);
}

export class GrpcClientPool {
  private readonly clients = new Map<string, pb.AgentServiceClient>();

  constructor(private readonly options: GrpcClientPoolOptions) {}

  /** The cached client for a `grpc://` or `grpcs://` URL. */
  client(url: string): pb.AgentServiceClient {
    const address = parseTransportUrl(url);
    if (address.scheme !== 'grpc' && address.scheme !== 'grpcs') {
      throw new ValueError(`GRPCTransport needs a grpc:// or grpcs:// URL, got ${url}`);
    }
    if (address.port === 0) throw new ValueError(`Cannot call port 0: ${url}`);
    const target = formatHostPort(address.host, address.port);
    const key = `${address.scheme}://${target}`;
    let client = this.clients.get(key);
    if (!client) {
      const tls = this.options.tls;
      client = new BoundedAgentServiceClient(target, channelCredentials(address.secure, tls), {
        'grpc.max_receive_message_length': this.options.maxMessageBytes,
        'grpc.max_send_message_length': this.options.maxMessageBytes,
        ...(tls?.servername
          ? { 'grpc.ssl_target_name_override': tls.servername, 'grpc.default_authority': tls.servername }
          : {}),
      });
      this.clients.set(key, client);
    }
    return client;
  }

  invoke(url: string, request: pb.InvokeRequest, settings: CallSettings): Promise<pb.InvokeResponse> {
    const { signal } = settings;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const client = this.client(url);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => call.cancel();
      const call = client.invoke(
        request,
        settings.metadata,
        callOptions(settings.timeoutMs),
        (error, response) => {
          signal?.removeEventListener('abort', onAbort);
          if (signal?.aborted) reject(abortError(signal));
          else if (error) reject(fromServiceError(error));
          else resolve(response);
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Yields the decoded events of one Stream call. Aborting the signal, or leaving the loop early,
   * cancels the RPC (not the task). A stream that ends without its final status is an UnavailableError.
   */
  stream(url: string, request: pb.InvokeRequest, settings: CallSettings): AsyncGenerator<TaskEvent> {
    return this.follow(settings, 'always', (options) =>
      this.client(url).stream(request, settings.metadata, options),
    );
  }

  /**
   * Yields the decoded events of one Subscribe call, as {@link stream}; an empty one is complete (the
   * caller already saw the final status), one that ends after events but before the final status is not.
   */
  subscribe(url: string, request: pb.SubscribeRequest, settings: CallSettings): AsyncGenerator<TaskEvent> {
    return this.follow(settings, 'once-started', (options) =>
      this.client(url).subscribe(request, settings.metadata, options),
    );
  }

  private async *follow(
    settings: CallSettings,
    needsFinal: 'always' | 'once-started',
    start: (options: Partial<CallOptions>) => ClientReadableStream<pb.TaskEvent>,
  ): AsyncGenerator<TaskEvent> {
    const { signal } = settings;
    if (signal?.aborted) throw abortError(signal);
    const call = start(callOptions(settings.timeoutMs));
    // Errors after a local cancel have nobody left to read them.
    call.on('error', () => undefined);
    const onAbort = (): void => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let sawFinal = false;
    let count = 0;
    try {
      for await (const message of call as AsyncIterable<pb.TaskEvent>) {
        const event = decodeTaskEvent(message);
        if (isFinalEvent(event)) sawFinal = true;
        count += 1;
        yield event;
      }
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      throw fromServiceError(error);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      call.cancel();
    }
    if (signal?.aborted) throw abortError(signal);
    if (!sawFinal && (needsFinal === 'always' || count > 0)) {
      throw new UnavailableError('The stream ended before its final task.status');
    }
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}
