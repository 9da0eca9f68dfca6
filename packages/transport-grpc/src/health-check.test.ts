import { AgentError, createTask, type Task } from '@agent/core';
import { checkHealth } from './health-check.js';
import { GRPCTransport } from './grpc-transport.js';

async function started(health: boolean): Promise<GRPCTransport> {
  const server = new GRPCTransport({ url: 'grpc://127.0.0.1:0', health, stopGraceMs: 2000 });
  server.onTaskReceived(async (task: Task) => {
    if (task.messages[0]?.parts[0]?.content === 'slow') await new Promise((r) => setTimeout(r, 300));
    return { ...task, state: 'completed' };
  });
  await server.start();
  return server;
}

describe('checkHealth', () => {
  it('answers SERVING while the server serves and NOT_SERVING once a stop began', async () => {
    const server = await started(true);
    try {
      expect(await checkHealth(server.url)).toBe('SERVING');
      expect(await checkHealth(server.url, { service: 'agent.v1.AgentService' })).toBe('SERVING');
      const client = new GRPCTransport({ url: server.url });
      const slow = client.send(
        { name: 'send_task', method: 'POST', path: '/tasks/' },
        server.url,
        createTask('slow'),
      );
      await new Promise((r) => setTimeout(r, 50));
      const stopped = server.stop();
      expect(await checkHealth(server.url)).toBe('NOT_SERVING');
      await expect(slow).resolves.toMatchObject({ state: 'completed' });
      await stopped;
      await client.stop();
    } finally {
      await server.stop();
    }
  });

  it('rejects with a typed error when the server has no health service', async () => {
    const server = await started(false);
    try {
      const error = await checkHealth(server.url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('METHOD_NOT_FOUND');
    } finally {
      await server.stop();
    }
  });

  it('rejects with UNAVAILABLE when nothing listens, and refuses a URL of another scheme', async () => {
    const server = await started(true);
    const url = server.url;
    await server.stop();
    await expect(checkHealth(url, { timeoutMs: 2000 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(checkHealth('http://127.0.0.1:1')).rejects.toMatchObject({ code: 'VALUE_ERROR' });
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gave up'));
    await expect(checkHealth('grpc://127.0.0.1:1', { signal: controller.signal })).rejects.toBeInstanceOf(
      AgentError,
    );
  });
});
