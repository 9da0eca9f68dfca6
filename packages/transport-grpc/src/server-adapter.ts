/**
 * The server side of GRPCTransport: `agent.v1.AgentService` on @grpc/grpc-js. Each RPC opens a call
 * on the server pipeline (which authenticates) before its body is decoded, then runs the decoded
 * operation through the pipeline and encodes what comes back. Every rule in between lives in the
 * pipeline; this file only speaks gRPC.
 */
import {
  InvalidRequestError,
  isFinalEvent,
  UnavailableError,
  type AgentError,
  type TlsOptions,
} from '@agent/core';
import { ReleasingMap, type TransportAddress } from '@agent/core/internal';
import {
  formatHostPort,
  settlesWithin,
  type EventFeed,
  type RequestInfo,
  type ServerCall,
  type ServerPipeline,
} from '@agent/server';
import { ABORTED, AbortWatch, RequestScope } from '@agent/server/node';
import {
  Server,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import {
  decodeInvokeRequestBytes,
  decodeSubscribeRequestBytes,
  encodeInvokeResponse,
  encodeTaskEvent,
  type DecodedInvokeRequest,
} from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { toStatusObject } from './grpc-errors.js';
import { metadataToHeaders } from './metadata.js';
import { AGENT_SERVICE_NAME, reflectionPackageDefinition } from './proto-files.js';
import { serverCredentials } from './tls.js';

export interface GrpcServerAdapterOptions {
  pipeline: ServerPipeline;
  address: TransportAddress;
  /** Present for `grpcs://` (checked by the transport base already). */
  tls: TlsOptions | undefined;
  health: boolean;
  reflection: boolean;
  maxMessageBytes: number;
}

/** Request bodies stay bytes until the call is authenticated (see {@link AGENT_SERVICE_RAW_REQUESTS}). */
type InvokeCall = ServerUnaryCall<Buffer, pb.InvokeResponse>;
/** A `Stream` or `Subscribe` call: both answer with a stream of TaskEvents. */
type StreamCall = ServerWritableStream<Buffer, pb.TaskEvent>;

/** After the pipeline drained: how long other services' calls (a health `Watch`) get before the server is forced down. */
const CLOSE_GRACE_MS = 1000;

/**
 * How often the health service re-reads the pipeline's state, so a `Watch` hears of a task store
 * that stopped (or resumed) taking writes; a `Check` reads it on the spot.
 */
const HEALTH_POLL_MS = 250;

type ServingStatus = 'SERVING' | 'NOT_SERVING';

const passThrough = (body: Buffer): Buffer => body;

/**
 * The generated service with pass-through request deserializers. grpc-js decodes a request before the
 * handler runs, so with the generated deserializer an undecodable body from an unauthenticated caller
 * would end as INTERNAL ahead of the auth check; the adapter decodes after authenticating instead.
 */
const AGENT_SERVICE_RAW_REQUESTS = {
  invoke: { ...pb.AgentServiceService.invoke, requestDeserialize: passThrough },
  stream: { ...pb.AgentServiceService.stream, requestDeserialize: passThrough },
  subscribe: { ...pb.AgentServiceService.subscribe, requestDeserialize: passThrough },
} satisfies ServiceDefinition;

let scopeSerial = 0;

/**
 * One RPC in flight. It is aborted when the client goes away (deadline, cancel) or when a stop
 * gives up on it; neither is a task cancel. The adapter hears of that through the scope's own
 * listener; an AbortSignal is made only for whoever reads `request.signal` (a handler).
 */
class RpcScope {
  /** The answer went to grpc-js; a later `cancelled` event is just the call ending. */
  answered = false;
  /**
   * The last event written to a stream was a final status: the caller has its answer, so however the
   * call ends now (the feed ends, a stop gives up on it, the server closes) it ends with OK.
   */
  finalWritten = false;
  /** Its key among the open streams. */
  readonly serial = ++scopeSerial;
  readonly request: RequestInfo;
  readonly aborts = new RequestScope();
  private watch: AbortWatch | undefined;

  constructor(call: InvokeCall | StreamCall) {
    // grpc-js emits 'cancelled' at the end of every call, finished ones included.
    call.on('cancelled', () => {
      if (!this.answered) this.aborts.abort(new UnavailableError('The client cancelled the call'));
    });
    this.request = new RpcRequest(metadataToHeaders(call.metadata), peerAddress(call.getPeer()), this.aborts);
  }

  /**
   * `work`, or a rejection with the abort's reason (a wire-safe AgentError) if the call is aborted
   * first. One listener serves all of a call's steps, which come one after another.
   */
  async race<T>(work: Promise<T>): Promise<T> {
    const step = await (this.watch ??= new AbortWatch(this.aborts)).race(work);
    if (step === ABORTED) throw this.aborts.reason;
    return step;
  }

  dispose(): void {
    this.watch?.dispose();
  }
}

/** What the pipeline sees of an RPC: a class, so the signal getter is the prototype's, not a closure per call. */
class RpcRequest implements RequestInfo {
  constructor(
    readonly headers: RequestInfo['headers'],
    readonly remoteAddress: string,
    private readonly scope: RequestScope,
  ) {}

  get signal(): AbortSignal {
    return this.scope.signal;
  }

  abort(reason: unknown): void {
    this.scope.abort(reason);
  }
}

export class GrpcServerAdapter {
  private readonly server: Server;
  /**
   * `Stream` and `Subscribe` calls not yet ended, so a stop can end those that are answered. Keyed by
   * `RpcScope.serial` in a ReleasingMap: an ended stream's call and feed must die young.
   */
  private readonly openStreams = new ReleasingMap<number, { call: StreamCall; scope: RpcScope }>();
  /** What the health service reports now; NOT_SERVING for good once a stop began. */
  private serving: ServingStatus = 'SERVING';
  private stopping = false;
  private healthPoll: NodeJS.Timeout | undefined;
  private readonly health: HealthImplementation | undefined;
  private readonly pipeline: ServerPipeline;

  constructor(private readonly options: GrpcServerAdapterOptions) {
    this.pipeline = options.pipeline;
    this.server = new Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': options.maxMessageBytes,
    });
    this.server.addService(AGENT_SERVICE_RAW_REQUESTS, {
      invoke: (call: InvokeCall, callback: sendUnaryData<pb.InvokeResponse>) => this.invoke(call, callback),
      stream: (call: StreamCall) => this.stream(call),
      subscribe: (call: StreamCall) => this.subscribe(call),
    });
    if (options.health) {
      this.health = new HealthImplementation({ '': 'SERVING', [AGENT_SERVICE_NAME]: 'SERVING' });
      this.addHealthService(this.health);
    }
    if (options.reflection) {
      new ReflectionService(reflectionPackageDefinition(options.health)).addToServer(this.server);
    }
  }

  /** Binds and serves; resolves with the bound port (the real one when the configured port was 0). */
  listen(): Promise<number> {
    const { host, port } = this.options.address;
    const target = formatHostPort(host, port);
    const credentials = serverCredentials(this.options.tls);
    return new Promise((resolve, reject) => {
      this.server.bindAsync(target, credentials, (error, boundPort) => {
        if (error) {
          this.markStopping();
          this.server.forceShutdown();
          reject(new UnavailableError(`Cannot listen on ${target}: ${error.message}`, { cause: error }));
        } else resolve(boundPort);
      });
    });
  }

  /** A stop began: the standard health service reports NOT_SERVING while calls drain. */
  markStopping(): void {
    this.stopping = true;
    clearInterval(this.healthPoll);
    this.healthPoll = undefined;
    this.setServing('NOT_SERVING');
  }

  /**
   * The health service says what `/readyz` says: SERVING while the pipeline is ready, NOT_SERVING
   * while its task store refuses writes (state `unavailable`) and from the moment a stop begins. The
   * library's service is push-based, so the state is read again before each `Check` and `Watch`, and
   * every {@link HEALTH_POLL_MS} (an unref'd timer) for the watchers already open.
   */
  private addHealthService(health: HealthImplementation): void {
    const server = this.server;
    const synced = {
      addService: (service: ServiceDefinition, implementation: UntypedServiceImplementation): void => {
        const wrapped: UntypedServiceImplementation = {};
        for (const [name, handler] of Object.entries(implementation)) {
          wrapped[name] = ((call: unknown, callback: unknown) => {
            this.syncHealth();
            return (handler as (call: unknown, callback: unknown) => void)(call, callback);
          }) as UntypedServiceImplementation[string];
        }
        server.addService(service, wrapped);
      },
    };
    health.addToServer(synced as unknown as Server);
    this.healthPoll = setInterval(() => this.syncHealth(), HEALTH_POLL_MS);
    this.healthPoll.unref();
  }

  private syncHealth(): void {
    if (this.stopping) return;
    this.setServing(this.pipeline.state === 'unavailable' ? 'NOT_SERVING' : 'SERVING');
  }

  private setServing(serving: ServingStatus): void {
    if (!this.health || serving === this.serving) return;
    this.serving = serving;
    this.health.setStatus('', serving);
    this.health.setStatus(AGENT_SERVICE_NAME, serving);
  }

  /**
   * Once the pipeline has drained: ends with OK every stream whose final status is written, lets the
   * answers flush (`tryShutdown` waits for every open call), and only then forces what is left
   * (`forceShutdown` cuts calls short, which their clients see as UNAVAILABLE).
   */
  async close(): Promise<void> {
    this.markStopping();
    for (const { call, scope } of this.openStreams.values()) {
      if (scope.finalWritten) this.endStream(call, scope);
    }
    const shutdown = new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
    if (!(await settlesWithin(shutdown, CLOSE_GRACE_MS))) this.server.forceShutdown();
  }

  private invoke(call: InvokeCall, callback: sendUnaryData<pb.InvokeResponse>): void {
    const scope = new RpcScope(call);
    void scope.race(this.answerInvoke(call, scope)).then(
      (response) => {
        scope.answered = true;
        scope.dispose();
        callback(null, response);
      },
      (error: AgentError) => {
        scope.answered = true;
        scope.dispose();
        callback(toStatusObject(error));
      },
    );
  }

  /** Authenticate, decode, run the operation, encode; rejects only with a wire-safe AgentError. */
  private async answerInvoke(call: InvokeCall, scope: RpcScope): Promise<pb.InvokeResponse> {
    const opened = await this.pipeline.open(scope.request);
    const request = this.decode(call.request, opened);
    const result = await this.pipeline.unary(opened, request.operation, request.data);
    try {
      return encodeInvokeResponse(request.operation, result);
    } catch (error) {
      throw this.pipeline.wireError(error, request.operation, opened);
    }
  }

  /** `Stream`: a new task's events. */
  private stream(call: StreamCall): void {
    this.serveFeed(call, 'stream_task', (opened) => {
      const request = decodeInvokeRequestBytes(call.request);
      if (request.operation !== 'send_task') {
        throw new InvalidRequestError(`Stream carries send_task only; call Invoke for ${request.operation}`);
      }
      return this.pipeline.stream(opened, request.data);
    });
  }

  /** `Subscribe`: the events of one of the caller's tasks, after a sequence. */
  private subscribe(call: StreamCall): void {
    this.serveFeed(call, 'subscribe_task', (opened) =>
      this.pipeline.subscribe(opened, decodeSubscribeRequestBytes(call.request)),
    );
  }

  private serveFeed(call: StreamCall, operation: string, open: (opened: ServerCall) => EventFeed): void {
    const scope = new RpcScope(call);
    this.openStreams.set(scope.serial, { call, scope });
    void this.pumpFeed(call, scope, operation, open).then(
      () => this.endStream(call, scope),
      (error: AgentError) => {
        // A caller that has its final status is answered: what fails after it is not its business.
        if (scope.finalWritten) return this.endStream(call, scope);
        this.openStreams.delete(scope.serial);
        if (scope.answered) return;
        scope.answered = true;
        if (!call.cancelled) call.emit('error', toStatusObject(error));
      },
    );
  }

  /** Ends a stream with OK, once. */
  private endStream(call: StreamCall, scope: RpcScope): void {
    this.openStreams.delete(scope.serial);
    if (scope.answered) return;
    scope.answered = true;
    if (!call.cancelled) call.end();
  }

  /**
   * Writes the pipeline's events (which end with exactly one final status) until the feed ends, the
   * client goes away or a stop gives up on the call; rejects only with a wire-safe AgentError. A feed
   * that fails before its first event rejects its first `next()`, so that failure leaves as a status
   * with no event written.
   */
  private async pumpFeed(
    call: StreamCall,
    scope: RpcScope,
    operation: string,
    open: (opened: ServerCall) => EventFeed,
  ): Promise<void> {
    const opened = await this.pipeline.open(scope.request);
    let events: EventFeed;
    try {
      events = open(opened);
    } catch (error) {
      throw this.pipeline.wireError(error, operation, opened);
    }
    try {
      for (;;) {
        const next = await scope.race(events.next());
        if (next.done) return;
        await this.write(call, encodeTaskEvent(next.value), scope.aborts);
        scope.finalWritten = isFinalEvent(next.value);
      }
    } catch (error) {
      // Aborted (a stop gave up on the call, the client left) after the final status went out: done.
      if (scope.finalWritten) return;
      throw this.pipeline.wireError(error, operation, opened);
    } finally {
      scope.dispose();
      // Ended early (client gone, stop, encoding failure): this caller detaches, the task goes on.
      void events.return();
    }
  }

  private decode(body: Buffer, opened: ServerCall): DecodedInvokeRequest {
    try {
      return decodeInvokeRequestBytes(body);
    } catch (error) {
      throw this.pipeline.wireError(error, 'invoke', opened);
    }
  }

  private async write(call: StreamCall, event: pb.TaskEvent, aborts: RequestScope): Promise<void> {
    if (call.write(event) || aborts.isAborted) return;
    // Back-pressure: a slow reader holds the producer here instead of growing the buffer.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        call.off('drain', done);
        aborts.offAbort(done);
        resolve();
      };
      call.on('drain', done);
      aborts.onAbort(done);
    });
  }
}

/**
 * The caller's address without its port, as the other wires give it: grpc-js names the peer
 * `<address>:<port>` (an IPv6 address unbracketed), and the per-caller limits, which tell anonymous
 * callers apart by address, would otherwise see every connection as a caller of its own.
 */
export function peerAddress(peer: string): string {
  return peer.replace(/:\d+$/, '');
}
