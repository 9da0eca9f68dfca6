import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootToolBin, rootToolDir } from './root-tool.js';
import { runCommand } from './run-command.js';

/**
 * A user's TypeScript file that imports every entry point of every package. Compiled without
 * `skipLibCheck`, it fails when a published declaration file needs a type that the package does
 * not bring along (an `@types/*` package kept in devDependencies).
 */
const CONSUMER_SOURCE = `import { createTask, type Task } from '@agent/core';
import * as coreInternal from '@agent/core/internal';
import { APIKeyAuth } from '@agent/auth';
import * as authTesting from '@agent/auth/testing';
import * as events from '@agent/events';
import * as eventsInternal from '@agent/events/internal';
import { openPostgresStores } from '@agent/store-postgres';
import * as storePostgresTesting from '@agent/store-postgres/testing';
import { Agent } from '@agent/runtime';
import { ScriptedLLM } from '@agent/runtime/testing';
import { ServerPipeline } from '@agent/server';
import * as serverNode from '@agent/server/node';
import * as serverTesting from '@agent/server/testing';
import { HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { GRPCTransport } from '@agent/transport-grpc';
import { RuntimeTransport } from '@agent/transport-memory';
import { AgentClient } from '@agent/client';

const task: Task = createTask('echo hello');
const agent = new Agent({ card: { name: 'typed' }, llm: new ScriptedLLM([{ content: 'hi', toolCalls: [] }]) });
const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', authenticator: new APIKeyAuth({ validKeys: {} }) });
const client = new AgentClient({ transport, baseUrl: 'http://127.0.0.1:0' });
export const used = [task, agent, client, coreInternal, authTesting, events, eventsInternal, openPostgresStores,
  storePostgresTesting, ServerPipeline, serverNode, serverTesting, SSETransport, WebSocketTransport, GRPCTransport, RuntimeTransport];
`;

/**
 * Type-checks CONSUMER_SOURCE in an installed project with the repository's TypeScript, strict,
 * NodeNext resolution, \`@types/node\` from the repository root (the one type package a Node user
 * is expected to have), and no \`skipLibCheck\`. Resolves with the compiler's output.
 */
export async function typecheckConsumer(projectDir: string): Promise<string> {
  writeFileSync(join(projectDir, 'consumer.ts'), CONSUMER_SOURCE);
  const tsc = rootToolBin('typescript', 'tsc');
  const typeRoots = join(rootToolDir('@types/node'), '..');
  const args = [
    tsc,
    '--noEmit',
    '--strict',
    '--target',
    'es2022',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--skipLibCheck',
    'false',
    '--typeRoots',
    typeRoots,
    '--types',
    'node',
    'consumer.ts',
  ];
  const { stdout } = await runCommand(process.execPath, args, { cwd: projectDir });
  return stdout;
}
