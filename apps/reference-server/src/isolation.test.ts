/**
 * Task isolation across owners, on every transport and every task operation: a second principal, and
 * the same principal naming another tenant, try to get, cancel, subscribe to, resubmit and list the
 * first owner's running and finished tasks. None of it succeeds, and every answer is the answer for an
 * unknown id, byte for byte once the ids, timestamps and generated ids in it are made neutral.
 */
import { request as httpRequest } from 'node:http';
import {
  AgentError,
  CLIENT_OPERATIONS,
  createTask,
  newId,
  type Task,
  type TaskEvent,
  type TaskList,
  type Transport,
} from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { RuntimeTransport } from '@agent/transport-memory';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { TEST_CONFIG } from './test-support/test-config.js';
import { createAuthenticator, startReferenceServer, type ReferenceServer } from './server.js';

jest.setTimeout(180_000);

// APIKeyAuth names a principal by a key's first 8 characters: these are two principals.
const ALICE = 'sk-alice-key-0001';
const BOB = 'sk-bobby-key-0002';
const KINDS = ['http', 'sse', 'ws', 'grpc', 'memory'] as const;
type Kind = (typeof KINDS)[number];
const RUNNING_PER_KIND = 10;
const FINISHED_PER_KIND = 10;

const config: ServerConfig = {
  ...TEST_CONFIG,
  auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: [ALICE, BOB] },
  stopGraceMs: 0,
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX_ID = /\b[0-9a-f]{16,32}\b/gi;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g;

/** An answer with the id asked about, every generated id and every timestamp made neutral. */
function neutral(answer: unknown, taskId: string): string {
  return JSON.stringify(answer)
    .split(taskId)
    .join('<task>')
    .replace(UUID, '<id>')
    .replace(HEX_ID, '<hex>')
    .replace(TIME, '<time>');
}

/** What the caller got: the value, or the refusal as the wire carried it. */
async function answerOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await work() };
  } catch (error) {
    if (error instanceof AgentError)
      return { error: { code: error.code, message: error.message, data: error.data } };
    throw error;
  }
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function rawGet(url: string, apiKey: string, tenant?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'x-api-key': apiKey };
    if (tenant !== undefined) headers['x-tenant'] = tenant;
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('task isolation between owners', () => {
  let server: ReferenceServer;
  const clients: Transport[] = [];

  beforeAll(async () => {
    server = await startReferenceServer(config);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.stop().catch(() => undefined)));
    await server.stop();
  });

  function urlOf(kind: Kind): string {
    return kind === 'memory' ? 'reference' : server.urls[kind];
  }

  let memory: RuntimeTransport | undefined;
  function client(kind: Kind, credentials: string, tenant?: string): Transport {
    const options = {
      credentials,
      authenticator: createAuthenticator(config)!,
      ...(tenant ? { tenant } : {}),
    };
    let transport: Transport;
    if (kind === 'memory') {
      if (!memory) {
        memory = new RuntimeTransport({ authenticator: createAuthenticator(config)! });
        memory.registerAgent(server.agent, { name: 'reference' });
        clients.push(memory);
      }
      transport = memory.client(options);
    } else {
      const url = urlOf(kind);
      transport =
        kind === 'http'
          ? new HTTPTransport({ url, ...options })
          : kind === 'sse'
            ? new SSETransport({ url, ...options })
            : kind === 'ws'
              ? new WebSocketTransport({ url, ...options })
              : new GRPCTransport({ url, ...options });
    }
    clients.push(transport);
    return transport;
  }

  async function whenRunning(ids: string[]): Promise<void> {
    while (!ids.every((id) => server.agent.activeTaskIds.includes(id))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  let attempts = 0;

  it.each(KINDS)("over %s, no stranger reaches a task, and each answer is an unknown id's", async (kind) => {
    const url = urlOf(kind);
    const alice = client(kind, ALICE);
    const strangers = {
      'other principal': client(kind, BOB),
      'other tenant': client(kind, ALICE, 'elsewhere'),
    };

    const finished: Task[] = [];
    for (let i = 0; i < FINISHED_PER_KIND; i++) {
      finished.push(await alice.send<Task>(CLIENT_OPERATIONS.send_task, url, createTask(`echo mine ${i}`)));
    }
    const running = Array.from({ length: RUNNING_PER_KIND }, () => createTask('sleep 60000'));
    const answers = running.map((task) => alice.send<Task>(CLIENT_OPERATIONS.send_task, url, task));
    await whenRunning(running.map((task) => task.id));

    const ops: Record<string, (as: Transport, task: Task) => Promise<unknown>> = {
      get: (as, task) => as.send(CLIENT_OPERATIONS.get_task, url, { task_id: task.id }),
      cancel: (as, task) =>
        as.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: task.id, reason: 'probe' }),
      subscribe: (as, task) => collect(as.subscribeTask!(url, task.id)),
      // The same id with a message of the stranger's: it must run as the stranger's own new task.
      resubmit: (as, task) =>
        as.send(CLIENT_OPERATIONS.send_task, url, { ...createTask('echo probe'), id: task.id }),
    };

    for (const target of [...finished, ...running]) {
      for (const [who, stranger] of Object.entries(strangers)) {
        // Listed first: the resubmission below gives the stranger a task of its own under this id.
        const listed = await stranger.send<TaskList>(CLIENT_OPERATIONS.list_tasks, url, { page_size: 100 });
        expect(listed.tasks.map((task) => task.id)).not.toContain(target.id);
        attempts++;
        for (const [name, op] of Object.entries(ops)) {
          const unknown = { ...target, id: newId() };
          const theirs = neutral(await answerOf(() => op(stranger, target)), target.id);
          const nobodys = neutral(await answerOf(() => op(stranger, unknown)), unknown.id);
          expect({ kind, who, name, answer: theirs }).toEqual({ kind, who, name, answer: nobodys });
          attempts++;
        }
      }
    }

    if (kind === 'http') {
      // Byte for byte on the wire too: status and body of a raw GET, for a task no stranger resubmitted.
      const target = await alice.send<Task>(CLIENT_OPERATIONS.send_task, url, createTask('echo raw'));
      const unknown = newId();
      for (const [key, tenant] of [
        [BOB, undefined],
        [ALICE, 'elsewhere'],
      ] as const) {
        const theirs = await rawGet(`${url}/tasks/${target.id}`, key, tenant);
        const nobodys = await rawGet(`${url}/tasks/${unknown}`, key, tenant);
        expect(theirs.status).toBe(404);
        expect(theirs.body.split(target.id).join('<id>')).toBe(nobodys.body.split(unknown).join('<id>'));
      }
    }

    // Nothing a stranger did touched the owner's tasks.
    for (const task of finished) {
      await expect(alice.send<Task>(CLIENT_OPERATIONS.get_task, url, { task_id: task.id })).resolves.toEqual(
        task,
      );
    }
    for (const task of running) {
      await expect(
        alice.send<Task>(CLIENT_OPERATIONS.get_task, url, { task_id: task.id }),
      ).resolves.toMatchObject({
        state: 'working',
      });
      await alice.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: task.id, reason: 'owner stops it' });
    }
    for (const answer of answers) await expect(answer).resolves.toMatchObject({ state: 'canceled' });
  });

  it('made at least 1,000 attempts', () => {
    expect(attempts).toBeGreaterThanOrEqual(1000);
  });
});
