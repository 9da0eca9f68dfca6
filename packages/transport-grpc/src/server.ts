/**
 * The server side of GRPCTransport: an `agent.v1.AgentService` on @grpc/grpc-js that authenticates
 * every call, maps Invoke onto core's `dispatchOperation` and Stream onto `handleTaskStreaming`.
 */
import { authenticateRequest, type Authenticator } from '@agent/auth';
import {
  dispatchOperation,
  InvalidRequestError,
  isFinalEvent,
  readTaskPayload,
  UnavailableError,
  type AgentError,
  type CallContext,
  type TaskHandler,
  type TlsOptions,
  type TransportAddress,
} from '@agent/core';
import {
  Server,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { ABORTED, untilAborted } from './abort.js';
import { decodeInvokeRequest, encodeInvokeResponse, encodeTaskEvent } from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { toStatusObject } from './grpc-errors.js';
import { metadataToHeaders } from './metadata.js';
import { AGENT_SERVICE_NAME, reflectionPackageDefinition } from './proto-files.js';
import { serverCredentials } from './tls.js';

export interface GrpcServerOptions {
  address: TransportAddress;
  handler: TaskHandler;
  authenticator?: Authenticator;
  tls?: TlsOptions;
  health: boolean;
  reflection: boolean;
  maxMessageBytes: number;
  shutdownTimeoutMs: number;
  strict: boolean;
}

/** One call in flight: its abort controller, and why the server ended it, if it did. */
interface ActiveCall {
  controller: AbortController;
  stopReason?: AgentError;
  /** The response or final status was handed to grpc-js; a later 'cancelled' is just the call ending. */
  settled?: boolean;
}

/** Request bodies stay bytes until the call is authenticated (see {@link AGENT_SERVICE_RAW_REQUESTS}). */
type InvokeCall = ServerUnaryCall<Buffer, pb.InvokeResponse>;
type StreamCall = ServerWritableStream<Buffer, pb.TaskEvent>;
type AgentCall = InvokeCall | StreamCall;

const passThrough = (body: Buffer): Buffer => body;

/**
 * The generated service with pass-through request deserializers. grpc-js decodes a request before the
 * handler runs, so with the generated deserializer an undecodable body from an unauthenticated caller
 * would end as INTERNAL ahead of the auth check; the handler decodes after authenticating instead.
 */
const AGENT_SERVICE_RAW_REQUESTS = {
  invoke: { ...pb.AgentServiceService.invoke, requestDeserialize: passThrough },
  stream: { ...pb.AgentServiceService.stream, requestDeserialize: passThrough },
} satisfies ServiceDefinition;

function decodeRequestBody(body: Buffer): pb.InvokeRequest {
  try {
    return pb.InvokeRequest.decode(body);
  } catch (error) {
    throw new InvalidRequestError('Request body is not a valid agent.v1.InvokeRequest', { cause: error });
  }
}

export class GrpcServer {
  private readonly server: Server;
  private readonly active = new Set<ActiveCall>();
  private healthService: HealthImplementation | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: GrpcServerOptions) {
    this.server = new Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': options.maxMessageBytes,
    });
    this.server.addService(AGENT_SERVICE_RAW_REQUESTS, {
      invoke: (call: InvokeCall, callback: sendUnaryData<pb.InvokeResponse>) => this.invoke(call, callback),
      stream: (call: StreamCall) => this.stream(call),
    });
    if (options.health) {
      this.healthService = new HealthImplementation({ '': 'SERVING', [AGENT_SERVICE_NAME]: 'SERVING' });
      this.healthService.addToServer(this.server);
    }
    if (options.reflection) {
      new ReflectionService(reflectionPackageDefinition(options.health)).addToServer(this.server);
    }
  }

  /** Binds and serves; resolves with the bound port (the real one when the configured port was 0). */
  async listen(): Promise<number> {
    const { host, port, secure } = this.options.address;
    const credentials = serverCredentials(secure, this.options.tls);
    const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(target, credentials, (error, boundPort) => {
        if (error) {
          this.server.forceShutdown();
          reject(new UnavailableError(`Cannot listen on ${target}: ${error.message}`, { cause: error }));
        } else resolve(boundPort);
      });
    });
  }

  /**
   * Stops accepting calls, ends every open Invoke/Stream with UNAVAILABLE (their contexts abort: a
   * stop is not a task cancel), waits up to `shutdownTimeoutMs` for other services' calls, then forces.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.healthService?.setStatus('', 'NOT_SERVING');
      this.healthService?.setStatus(AGENT_SERVICE_NAME, 'NOT_SERVING');
      const drained = new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
      for (const call of this.active) {
        call.stopReason = new UnavailableError('Server is stopping');
        call.controller.abort(call.stopReason);
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.options.shutdownTimeoutMs);
      });
      await Promise.race([drained, timeout]);
      clearTimeout(timer);
      this.server.forceShutdown();
    })();
    return this.stopping;
  }

  private track(call: AgentCall): ActiveCall {
    const active: ActiveCall = { controller: new AbortController() };
    // The client went away or its deadline passed: the RPC ends, the task is the handler's business.
    // grpc-js emits 'cancelled' at the end of every call, finished ones included: only a call still
    // in flight is aborted (and only then is the error, with its stack capture, built).
    call.on('cancelled', () => {
      if (active.settled || active.controller.signal.aborted) return;
      active.controller.abort(new UnavailableError('The client cancelled the call'));
    });
    this.active.add(active);
    if (this.stopping) {
      active.stopReason = new UnavailableError('Server is stopping');
      active.controller.abort(active.stopReason);
    }
    return active;
  }

  private async callContext(metadata: Metadata, signal: AbortSignal): Promise<CallContext> {
    const headers = metadataToHeaders(metadata);
    const security = await authenticateRequest({ authenticator: this.options.authenticator, headers });
    return security
      ? { security, signal, headers, transport: 'grpc' }
      : { signal, headers, transport: 'grpc' };
  }

  private invoke(call: InvokeCall, callback: sendUnaryData<pb.InvokeResponse>): void {
    const active = this.track(call);
    const work = (async () => {
      const ctx = await this.callContext(call.metadata, active.controller.signal);
      const request = decodeInvokeRequest(decodeRequestBody(call.request));
      const result = await dispatchOperation(this.options.handler, request.operation, request.data, ctx, {
        strict: this.options.strict,
      });
      return encodeInvokeResponse(request.operation, result);
    })();
    untilAborted(work, active.controller.signal)
      .then(
        (response) => {
          active.settled = true;
          if (response === ABORTED)
            callback(toStatusObject(active.stopReason ?? new UnavailableError('Call cancelled')));
          else callback(null, response);
        },
        (error: unknown) => {
          active.settled = true;
          callback(toStatusObject(active.stopReason ?? error));
        },
      )
      .finally(() => this.active.delete(active));
  }

  private stream(call: StreamCall): void {
    const active = this.track(call);
    void this.runStream(call, active)
      .catch((error: unknown) => {
        if (!call.cancelled) call.emit('error', toStatusObject(active.stopReason ?? error));
      })
      .finally(() => this.active.delete(active));
  }

  private async runStream(call: StreamCall, active: ActiveCall): Promise<void> {
    const signal = active.controller.signal;
    // Authentication comes first: a rejected call never reaches the handler.
    const ctx = await this.callContext(call.metadata, signal);
    const request = decodeInvokeRequest(decodeRequestBody(call.request));
    if (request.operation !== 'send_task') {
      throw new InvalidRequestError(`Stream carries send_task only; call Invoke for ${request.operation}`);
    }
    const task = readTaskPayload(request.data, { strict: this.options.strict });
    const iterator = this.options.handler.handleTaskStreaming(task, ctx)[Symbol.asyncIterator]();
    let exhausted = false;
    try {
      for (;;) {
        const next = await untilAborted(iterator.next(), signal);
        if (next === ABORTED) break;
        if (next.done) {
          exhausted = true;
          break;
        }
        await this.write(call, encodeTaskEvent(next.value), signal);
        if (isFinalEvent(next.value)) {
          // The handler's own cleanup (its `finally` blocks) runs before the client sees the end.
          await untilAborted(Promise.resolve(iterator.return?.()), signal).catch(() => undefined);
          exhausted = true;
          break;
        }
      }
    } finally {
      // An aborted generator may be suspended inside the handler; ask it to finish without waiting.
      if (!exhausted) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
    if (active.stopReason) throw active.stopReason;
    active.settled = true;
    if (!call.cancelled) call.end();
  }

  private async write(call: StreamCall, event: pb.TaskEvent, signal: AbortSignal): Promise<void> {
    if (call.write(event) || signal.aborted) return;
    // Back-pressure: a slow reader holds the producer here instead of growing the buffer.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        call.off('drain', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      call.on('drain', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
