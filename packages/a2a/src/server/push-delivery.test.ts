/** Push delivery through A2AServer: configs set on SendMessage and on a running task get the task's updates. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PushAttempt } from '../push/push-notifier.js';
import { ALICE, type Served, eventually, serveA2A, userMessage } from './test-support/serve.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('A2AServer push delivery', () => {
  let s: Served;
  let hook: Server;
  let hookUrl: string;
  const received: { token: string | undefined; body: Json }[] = [];
  const attempts: PushAttempt[] = [];

  beforeAll(async () => {
    hook = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          token: req.headers['x-a2a-notification-token'] as string | undefined,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json,
        });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    s = await serveA2A({
      push: { allowPrivateNetworks: true, initialBackoffMs: 1, maxBackoffMs: 5 },
      onPushAttempt: (attempt) => attempts.push(attempt),
    });
  });
  afterAll(async () => {
    await s.stop();
    await new Promise((resolve) => hook.close(resolve));
  });

  it('a config in SendMessage follows the task from its start', async () => {
    const response = await s.rpc(
      'SendMessage',
      {
        message: userMessage('ticks 2'),
        configuration: { taskPushNotificationConfig: { url: hookUrl, token: 'tok-1' } },
      },
      { key: ALICE },
    );
    const task = (response.json as Json).result.task as Json;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    await eventually(
      async () =>
        received.some(
          (r) =>
            r.body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED' &&
            r.body.statusUpdate.taskId === task.id,
        ),
      'the final update is delivered',
    );
    const mine = received.filter((r) => (r.body.statusUpdate ?? r.body.artifactUpdate)?.taskId === task.id);
    expect(mine.every((r) => r.token === 'tok-1')).toBe(true);
    expect(mine.filter((r) => r.body.artifactUpdate)).toHaveLength(2);
    expect(attempts.some((a) => a.taskId === task.id && a.ok)).toBe(true);
  });

  it('a config created on a running task gets its later updates', async () => {
    const sent = (
      await s.rpc(
        'SendMessage',
        { message: userMessage('wait 150'), configuration: { returnImmediately: true } },
        { key: ALICE },
      )
    ).json as Json;
    const id = sent.result.task.id as string;
    const created = await s.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: id, url: hookUrl },
      { key: ALICE },
    );
    expect((created.json as Json).result).toMatchObject({ taskId: id, url: hookUrl });
    await eventually(
      async () =>
        received.some(
          (r) =>
            r.body.statusUpdate?.taskId === id && r.body.statusUpdate.status.state === 'TASK_STATE_COMPLETED',
        ),
      'the running task’s final update is delivered',
    );
  });
});
