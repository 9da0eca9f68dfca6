/**
 * POST /tasks/ echo throughput: each HTTPTransport backend beside its bare baseline, same run,
 * same payload, same autocannon settings.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import { createTask, handlerFromFunction } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';

export interface BenchSettings {
  durationSeconds: number;
  connections: number;
}

export interface HttpResult {
  name: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  errors: number;
  non2xx: number;
}

const BODY = JSON.stringify(createTask('echo benchmark payload', { id: 'bench-task' }));

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A bare node:http JSON echo: read, parse, stringify, write. */
function bareNode(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const task = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const body = JSON.stringify({ ...task, state: 'completed' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
}

/** A bare express 5 JSON echo with express.json(). */
function bareExpress(): Server {
  const app = express();
  app.use(express.json({ limit: '4mb' }));
  app.post('/tasks/', (req, res) => {
    res.json({ ...(req.body as Record<string, unknown>), state: 'completed' });
  });
  return createServer(app);
}

async function load(name: string, url: string, settings: BenchSettings): Promise<HttpResult> {
  const result = await autocannon({
    url: `${url}/tasks/`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    connections: settings.connections,
    duration: settings.durationSeconds,
  });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

async function withServer(server: Server, name: string, settings: BenchSettings): Promise<HttpResult> {
  const url = await listen(server);
  try {
    await load(`${name} (warm-up)`, url, { ...settings, durationSeconds: 1 });
    return await load(name, url, settings);
  } finally {
    await close(server);
  }
}

async function withTransport(backend: 'node' | 'express', settings: BenchSettings): Promise<HttpResult> {
  const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend });
  transport.bind(handlerFromFunction(async (task) => ({ ...task, state: 'completed' })));
  await transport.start();
  try {
    await load(`${backend} (warm-up)`, transport.url, { ...settings, durationSeconds: 1 });
    return await load(`HTTPTransport backend=${backend}`, transport.url, settings);
  } finally {
    await transport.stop();
  }
}

export interface HttpComparison {
  baseline: HttpResult;
  subject: HttpResult;
  ratio: number;
  target: number;
}

export async function runHttpBench(settings: BenchSettings): Promise<HttpComparison[]> {
  const nodeBaseline = await withServer(bareNode(), 'bare node:http echo', settings);
  const nodeSubject = await withTransport('node', settings);
  const expressBaseline = await withServer(bareExpress(), 'bare express 5 + express.json() echo', settings);
  const expressSubject = await withTransport('express', settings);
  return [
    {
      baseline: nodeBaseline,
      subject: nodeSubject,
      ratio: nodeSubject.requestsPerSecond / nodeBaseline.requestsPerSecond,
      target: 0.7,
    },
    {
      baseline: expressBaseline,
      subject: expressSubject,
      ratio: expressSubject.requestsPerSecond / expressBaseline.requestsPerSecond,
      target: 0.85,
    },
  ];
}
