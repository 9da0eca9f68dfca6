import { BudgetExceededError, UnavailableError, ValueError } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { AgentClient } from './agent-client.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

/** What each route answers before it answers normally (see test-support/scripted-process.cjs). */
const SCRIPT = {
  'GET /.well-known/agent.json': [
    { status: 503, code: 'UNAVAILABLE' },
    { status: 429, code: 'RESOURCE_EXHAUSTED' },
  ],
  'GET /tasks/t-off': [{ status: 503, code: 'UNAVAILABLE' }],
  'GET /tasks/t-budget': [{ status: 429, code: 'BUDGET_EXCEEDED' }],
  'GET /tasks/t-deadline': [{ status: 503, code: 'UNAVAILABLE', data: { retry_after_ms: 4000 } }],
};

describe('client.sync retries like the async client', () => {
  let server: ServerProcess;
  let client: AgentClient;

  async function attempts(route: string): Promise<number | undefined> {
    const response = await fetch(`${server.url}/_attempts`);
    return ((await response.json()) as Record<string, number>)[route];
  }

  beforeAll(async () => {
    server = await startServerProcess('scripted-process.cjs', { SCRIPT: JSON.stringify(SCRIPT) });
    client = new AgentClient({
      transport: new HTTPTransport({ url: server.url }),
      baseUrl: server.url,
      retry: { baseDelayMs: 1 },
    });
  });

  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('a blocking call succeeds after transient failures', async () => {
    expect(client.sync.getAgentCard().name).toBe('scripted');
    expect(await attempts('GET /.well-known/agent.json')).toBe(3);
  });

  it('retry: false and a non-transient code give one attempt', async () => {
    expect(() => client.sync.getTask('t-off', { retry: false })).toThrow(UnavailableError);
    expect(() => client.sync.getTask('t-budget')).toThrow(BudgetExceededError);
    expect(await attempts('GET /tasks/t-off')).toBe(1);
    expect(await attempts('GET /tasks/t-budget')).toBe(1);
  });

  it('a wait that would outlast the blocking timeout ends with the last error', async () => {
    // The server asks for 4 s (within maxDelayMs); the caller blocks for 1.5 s at most.
    expect(() => client.sync.getTask('t-deadline', { timeoutMs: 1500 })).toThrow(UnavailableError);
    expect(await attempts('GET /tasks/t-deadline')).toBe(1);
  });

  it('checks retry options on the calling thread', () => {
    expect(() => client.sync.getTask('t-off', { retry: { tries: 2 } as never })).toThrow(
      'client.sync.getTask retry does not accept the option "tries"',
    );
    expect(() => client.sync.getAgentCard({ retry: { maxAttempts: 1.5 } })).toThrow(ValueError);
  });
});
