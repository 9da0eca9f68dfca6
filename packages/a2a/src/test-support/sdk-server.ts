/**
 * An echo agent on the official A2A SDK (`@a2a-js/sdk` 1.3.0) hosted on Express: the third-party
 * server our A2A client is tested against. What the executor does depends on the first text part of
 * the user message:
 *
 * - `message:<text>`: answers with one Message (no task);
 * - `fail`: the task fails (with an agent message);
 * - `slow`: the task stays working until it is canceled;
 * - `input`: the task asks for input; the next message on the same task completes it;
 * - `hang-up`: the task reports working, then the executor ends without a final state;
 * - anything else: one artifact echoing the text, then COMPLETED with the agent message `echo: <text>`.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AgentCard, Message, Task, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type User,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

export type SdkBinding = 'JSONRPC' | 'HTTP+JSON';

export interface SdkServerOptions {
  /** Interfaces on the card, in this order. Default JSONRPC then HTTP+JSON. */
  bindings?: SdkBinding[];
  /** Advertised on every interface (the client must echo it). */
  tenant?: string;
  /** Requires `X-API-Key: <apiKey>` on the bindings (not the card). */
  apiKey?: string;
  /** Requires `Authorization: Bearer <bearer>` on the bindings (not the card). */
  bearer?: string;
  /** Serves the card as the SDK's own card handler does: scheme entries in the non-canonical `$case` form. */
  nonCanonicalCard?: boolean;
  /** `capabilities.streaming`. Default true. */
  streaming?: boolean;
}

/** One request the server saw. */
export interface SdkRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface SdkServer {
  /** The base URL (the card is at `${url}/.well-known/agent-card.json`). */
  readonly url: string;
  /** Every request, in order. */
  readonly requests: SdkRequest[];
  /** The tenant of every executed message (`undefined`: none). */
  readonly tenants: (string | undefined)[];
  /** The card as served (ProtoJSON unless `nonCanonicalCard`). */
  readonly card: Record<string, unknown>;
  close(): Promise<void>;
}

const PATHS: Record<SdkBinding, string> = { JSONRPC: '/a2a/jsonrpc', 'HTTP+JSON': '/a2a/rest' };

/** Starts the echo agent on a free loopback port. */
export async function startSdkServer(options: SdkServerOptions = {}): Promise<SdkServer> {
  const app = express();
  const requests: SdkRequest[] = [];
  const tenants: (string | undefined)[] = [];
  app.use((req: Request, _res: Response, next: NextFunction) => {
    requests.push({ method: req.method, path: req.originalUrl, headers: { ...req.headers } });
    next();
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bindings = options.bindings ?? ['JSONRPC', 'HTTP+JSON'];
  const schemes: Record<string, unknown> = {};
  const requirements: unknown[] = [];
  if (options.apiKey !== undefined) {
    schemes.apiKey = { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } };
    requirements.push({ schemes: { apiKey: { list: [] } } });
  }
  if (options.bearer !== undefined) {
    schemes.bearer = { httpAuthSecurityScheme: { scheme: 'Bearer' } };
    requirements.push({ schemes: { bearer: { list: [] } } });
  }
  const card = AgentCard.fromJSON({
    name: 'sdk-echo',
    description: 'Echo agent on the official A2A SDK',
    version: '1.0.0',
    supportedInterfaces: bindings.map((binding) => ({
      url: `${url}${PATHS[binding]}`,
      protocolBinding: binding,
      protocolVersion: '1.0',
      ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
    })),
    capabilities: { streaming: options.streaming ?? true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the text', tags: ['echo'] }],
    securitySchemes: schemes,
    securityRequirements: requirements,
  });
  const served = (
    options.nonCanonicalCard ? JSON.parse(JSON.stringify(card)) : AgentCard.toJSON(card)
  ) as Record<string, unknown>;
  app.get('/.well-known/agent-card.json', (_req: Request, res: Response) => {
    res.set('Cache-Control', 'max-age=60').json(served);
  });

  const executor = new EchoExecutor((tenant) => tenants.push(tenant));
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const userBuilder = async (req: Request): Promise<User> => {
    const name = (req as Request & { principal?: string }).principal;
    return name === undefined ? UserBuilder.noAuthentication() : authenticated(name);
  };
  const guard = (req: Request, res: Response, next: NextFunction): void => {
    const key = req.headers['x-api-key'];
    const authorization = req.headers.authorization;
    if (options.apiKey !== undefined && key === options.apiKey) {
      (req as Request & { principal?: string }).principal = 'key-user';
    } else if (options.bearer !== undefined && authorization === `Bearer ${options.bearer}`) {
      (req as Request & { principal?: string }).principal = 'bearer-user';
    } else if (options.apiKey !== undefined || options.bearer !== undefined) {
      res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: 'unauthenticated' });
      return;
    }
    next();
  };
  for (const binding of bindings) {
    const handler =
      binding === 'JSONRPC'
        ? jsonRpcHandler({ requestHandler, userBuilder })
        : restHandler({ requestHandler, userBuilder });
    app.use(PATHS[binding], guard, handler);
  }
  return {
    url,
    requests,
    tenants,
    card: served,
    close: () =>
      new Promise<void>((resolve, reject) => {
        executor.releaseAll();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function authenticated(userName: string): User {
  return { isAuthenticated: true, userName };
}

/** The echo agent; `slow` tasks wait here until canceled (or the server closes). */
class EchoExecutor implements AgentExecutor {
  private readonly waiting = new Map<string, () => void>();
  private readonly contexts = new Map<string, string>();

  constructor(private readonly onTenant: (tenant: string | undefined) => void) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    this.onTenant(context.context.tenant);
    const { taskId, contextId } = context;
    this.contexts.set(taskId, contextId);
    const text = firstText(context.userMessage);
    if (text.startsWith('message:')) {
      bus.publish(AgentEvent.message(agentMessage(`echo: ${text.slice(8)}`, { contextId })));
      bus.finished();
      return;
    }
    const history = [...(context.task?.history ?? []), context.userMessage];
    bus.publish(
      AgentEvent.task(
        Task.fromJSON({
          id: taskId,
          contextId,
          status: { state: 'TASK_STATE_SUBMITTED' },
          history: history.map((message) => Message.toJSON(message)),
        }),
      ),
    );
    const status = (state: string, reply?: string): void => {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: TaskState[state as keyof typeof TaskState],
            message: reply === undefined ? undefined : agentMessage(reply, { taskId, contextId }),
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }),
      );
    };
    if (context.task && text !== 'input') {
      status('TASK_STATE_COMPLETED', `continued: ${text}`);
    } else if (text === 'fail') {
      status('TASK_STATE_FAILED', 'it failed');
    } else if (text === 'input') {
      status('TASK_STATE_INPUT_REQUIRED', 'say more');
    } else if (text === 'hang-up') {
      status('TASK_STATE_WORKING');
    } else if (text === 'slow') {
      status('TASK_STATE_WORKING');
      await new Promise<void>((resolve) => this.waiting.set(taskId, resolve));
      return;
    } else {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'echo',
            name: 'echo',
            description: '',
            parts: [
              { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' },
            ],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      status('TASK_STATE_COMPLETED', `echo: ${text}`);
    }
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: this.contexts.get(taskId) ?? '',
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
    bus.finished();
    this.waiting.get(taskId)?.();
    this.waiting.delete(taskId);
  };

  releaseAll(): void {
    for (const release of this.waiting.values()) release();
    this.waiting.clear();
  }
}

function firstText(message: Message): string {
  for (const part of message.parts) if (part.content?.$case === 'text') return part.content.value;
  return '';
}

function agentMessage(text: string, ids: { taskId?: string; contextId?: string }): Message {
  return Message.fromJSON({
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_AGENT',
    parts: [{ text }],
    ...ids,
  });
}
