/**
 * The built server as a real process: `GET /metrics` (its own token, Prometheus text a strict
 * reader accepts, counters that move with requests), memory that stays flat when far more calls
 * arrive than `AGENT_MAX_CONCURRENT_TASKS` lets run, and the pretty log format.
 */
import { readFileSync } from 'node:fs';
import { createTask } from '@agent/core';
import { parsePrometheusText, sampleValue, type PrometheusFamily } from '@agent/server/testing';
import { rawRequest } from '@agent/test-support';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(120_000);

const TOKEN = 'scrape-token-0123456789';

async function scrape(server: ServerProcess, token = TOKEN): Promise<Map<string, PrometheusFamily>> {
  const answer = await rawRequest(`${server.urls.http}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(answer.status).toBe(200);
  expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(answer.text);
}

/** The process's resident set, in bytes, as the kernel reports it. */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!kb) throw new Error('no VmRSS line');
  return Number(kb[1]) * 1024;
}

describe('GET /metrics', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({
      AGENT_METRICS: '1',
      AGENT_METRICS_TOKEN: TOKEN,
      AGENT_AUTH: 'apikey',
      AGENT_API_KEYS: 'sk-metrics-key-1',
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers 401 without the metrics token, whatever agent credential is sent', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token' },
      { 'x-api-key': 'sk-metrics-key-1' },
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
    ]) {
      const answer = await rawRequest(`${server.urls.http}/metrics`, { headers });
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(answer.json).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
      expect(answer.text).not.toContain(TOKEN);
    }
    // The metrics token is not an agent credential either.
    const task = await rawRequest(`${server.urls.http}/tasks/`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: createTask('echo no'),
    });
    expect(task.status).toBe(401);
  });

  it('serves Prometheus text whose counters move with the requests', async () => {
    const before = await scrape(server);
    const sent = (labels: Record<string, string>, families: Map<string, PrometheusFamily>) =>
      sampleValue(families, 'agent_server_requests_total', labels);
    const key = { 'x-api-key': 'sk-metrics-key-1' };
    for (let i = 0; i < 3; i++) {
      const answer = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: key,
        body: createTask(`echo ${i}`),
      });
      expect(answer.status).toBe(200);
    }
    expect((await rawRequest(`${server.urls.http}/tasks/nope`, { headers: key })).status).toBe(404);
    expect((await rawRequest(`${server.urls.http}/tasks`, { headers: {} })).status).toBe(401);

    const after = await scrape(server);
    const ok = { operation: 'send_task', transport: 'http', outcome: 'ok' };
    expect(sent(ok, after) - sent(ok, before)).toBe(3);
    const missing = { operation: 'get_task', transport: 'http', outcome: 'TASK_NOT_FOUND' };
    expect(sent(missing, after) - sent(missing, before)).toBe(1);
    const refused = { operation: 'open', outcome: 'UNAUTHENTICATED' };
    expect(sent(refused, after) - sent(refused, before)).toBe(1);
    const finished = (families: Map<string, PrometheusFamily>) =>
      sampleValue(families, 'agent_server_tasks_finished_total', { transport: 'http', state: 'completed' });
    expect(finished(after) - finished(before)).toBe(3);
    expect(
      sampleValue(after, 'agent_server_request_duration_seconds_count', ok) -
        sampleValue(before, 'agent_server_request_duration_seconds_count', ok),
    ).toBe(3);
    expect(after.get('agent_server_active_tasks')?.type).toBe('gauge');
    expect(after.get('agent_server_request_duration_seconds')?.type).toBe('histogram');
    // Nothing about who called: no principal, tenant or key in the exposition.
    const text = (
      await rawRequest(`${server.urls.http}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text;
    expect(text).not.toContain('sk-metrics');
    expect(text).not.toContain('api-key-');
  });
});

describe('far more calls than AGENT_MAX_CONCURRENT_TASKS', () => {
  it('refuses the excess at once and keeps the resident memory flat', async () => {
    const server = await startServerProcess({
      AGENT_METRICS: '1',
      AGENT_METRICS_TOKEN: TOKEN,
      AGENT_MAX_CONCURRENT_TASKS: '4',
      AGENT_LOG_LEVEL: 'warn',
    });
    try {
      const pid = server.child.pid!;
      const statuses = new Map<number, number>();
      const wave = async (size: number): Promise<void> => {
        const answers = await Promise.all(
          Array.from({ length: size }, () =>
            rawRequest(`${server.urls.http}/tasks/`, { body: createTask('sleep 300') }),
          ),
        );
        for (const { status, headers } of answers) {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 503) expect(headers['retry-after']).toBe('1');
        }
      };
      // Warm up (JIT, pools, the store's first records), then measure across many more waves.
      for (let i = 0; i < 3; i++) await wave(200);
      const before = rssOf(pid);
      for (let i = 0; i < 15; i++) {
        await wave(200);
        const families = await scrape(server);
        expect(sampleValue(families, 'agent_server_active_tasks')).toBeLessThanOrEqual(4);
      }
      const after = rssOf(pid);
      // 3,600 calls, at most 4 running at any time: nearly all refused, none queued.
      expect(statuses.get(503) ?? 0).toBeGreaterThan(3000);
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      // Generous: garbage collection timing moves RSS by tens of MB; a queue of 3,600 held calls would not fit.
      expect(after).toBeLessThan(before * 1.5 + 64 * 1024 * 1024);
    } finally {
      await server.stop();
    }
  });
});

describe('AGENT_LOG_FORMAT=pretty', () => {
  it('writes one readable line per request instead of JSON', async () => {
    const server = await startServerProcess({ AGENT_LOG_FORMAT: 'pretty' });
    try {
      const task = createTask('echo pretty');
      expect((await rawRequest(`${server.urls.http}/tasks/`, { body: task })).status).toBe(200);
    } finally {
      await server.stop();
    }
    const line = server
      .stderr()
      .split('\n')
      .find((text) => text.includes(' request '));
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request operation=send_task transport=http status=ok duration_ms=\S+ principal_id=anonymous tenant="" task_id=\S+$/,
    );
  });
});
