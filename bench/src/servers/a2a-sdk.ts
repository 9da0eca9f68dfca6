/**
 * The A2A baseline: the official `@a2a-js/sdk` 1.3 server on Express, doing the reference server's
 * echo work through its own executor (the task, an artifact echoing the text, the completed status
 * carrying an agent message with the text), run as its own process like every server under test.
 *
 * The card is written with `AgentCard.toJSON` rather than the SDK's `agentCardHandler`, which sends
 * the in-memory oneof objects instead of ProtoJSON; no A2A client reads the card here, but the
 * server is then one a client could discover.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, Role, TaskState, type Message, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { announce } from './echo-work.js';

export const JSON_RPC_PATH = '/a2a';

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' };
}

function userText(message: Message): string {
  return message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('')
    .replace(/^echo\s+/i, '');
}

const echoExecutor: AgentExecutor = {
  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = context;
    const text = userText(userMessage);
    const now = () => new Date().toISOString();
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: {
            messageId: randomUUID(),
            contextId,
            taskId,
            role: Role.ROLE_AGENT,
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          timestamp: now(),
        },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask(): Promise<void> {
    // Echo tasks finish within their execute call: nothing is ever left to cancel.
  },
};

function cardFor(url: string): AgentCard {
  return AgentCard.fromJSON({
    name: 'sdk-echo',
    description: 'Echo agent on @a2a-js/sdk, the A2A benchmark baseline.',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Replies with the text', tags: ['echo'] }],
  });
}

async function main(): Promise<void> {
  const app = express();
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card = cardFor(`${base}${JSON_RPC_PATH}`);
  const cardJson = JSON.stringify(AgentCard.toJSON(card));
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), echoExecutor);
  app.get('/.well-known/agent-card.json', (_req, res) => {
    res.set('cache-control', 'public, max-age=300').type('application/json').send(cardJson);
  });
  app.use(JSON_RPC_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  announce({ http: base });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
