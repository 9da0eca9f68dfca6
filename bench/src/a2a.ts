/**
 * A2A 1.0 JSON-RPC load, the same for the reference server in A2A mode and the `@a2a-js/sdk`
 * baseline: request bodies, the checks of their answers, and one streamed send over raw node:http
 * (a client library would add its own cost to both sides; the figure is the server's).
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';

/** Where both servers serve JSON-RPC, below their HTTP URL. */
export const A2A_JSON_RPC_PATH = '/a2a';
export const A2A_HEADERS = { 'a2a-version': '1.0' };

/**
 * A `SendMessage` (or `SendStreamingMessage`) request whose ids are autocannon's `[<id>]`
 * placeholder. The message names no task, so every request starts a fresh one.
 */
export function a2aRequestTemplate(method: 'SendMessage' | 'SendStreamingMessage', text: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: '[<id>]',
    method,
    params: { message: { messageId: 'm-[<id>]', role: 'ROLE_USER', parts: [{ text }] } },
  });
}

interface A2APartJson {
  text?: string;
}
interface A2ATaskJson {
  status?: { state?: string };
  artifacts?: { parts?: A2APartJson[] }[];
}

function fail(what: string, body: unknown): never {
  throw new Error(`wrong A2A answer (${what}): ${JSON.stringify(body)?.slice(0, 200)}`);
}

/** Throws unless `body` is a JSON-RPC answer with the completed echo of `text` as a Task. */
export function checkA2ASend(body: unknown, text: string): void {
  const task = (body as { result?: { task?: A2ATaskJson } })?.result?.task;
  if (!task) fail('no result.task', body);
  if (task.status?.state !== 'TASK_STATE_COMPLETED') fail('not completed', body);
  if (task.artifacts?.[0]?.parts?.[0]?.text !== text) fail('no artifact with the text', body);
}

/** autocannon's per-answer check: the same as checkA2ASend, as a boolean. */
export function a2aSendVerifier(text: string): (body: string | Buffer | undefined) => boolean {
  return (body) => {
    try {
      checkA2ASend(JSON.parse(String(body)), text);
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * One `SendStreamingMessage` over `agent`, read to its end; throws unless the stream is the echo of
 * `text`: a Task first, an artifact update with the text, a completed status last, no error frame.
 */
export function a2aStreamOnce(agent: http.Agent, url: URL, body: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: `${url.pathname.replace(/\/$/, '')}${A2A_JSON_RPC_PATH}`,
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': Buffer.byteLength(body),
          ...A2A_HEADERS,
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`SendStreamingMessage: HTTP ${res.statusCode}`));
          return;
        }
        const frames: Record<string, unknown>[] = [];
        let broken: Error | undefined;
        const parser = createParser({
          onEvent: (message) => {
            try {
              const frame = JSON.parse(message.data) as { result?: Record<string, unknown>; error?: unknown };
              if (!frame.result) throw new Error(`error frame ${JSON.stringify(frame.error)}`);
              frames.push(frame.result);
            } catch (error) {
              broken ??= error as Error;
            }
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('error', reject);
        res.on('end', () => {
          try {
            if (broken) throw broken;
            checkA2AStream(frames, text);
            resolve();
          } catch (error) {
            reject(error as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function checkA2AStream(frames: Record<string, unknown>[], text: string): void {
  if (!frames[0]?.task) fail('the first frame is no task', frames[0]);
  const echoed = frames.some(
    (frame) =>
      (frame.artifactUpdate as { artifact?: { parts?: A2APartJson[] } } | undefined)?.artifact?.parts?.[0]
        ?.text === text,
  );
  if (!echoed) fail('no artifact update with the text', frames);
  const last = frames.at(-1)?.statusUpdate as { status?: { state?: string } } | undefined;
  if (last?.status?.state !== 'TASK_STATE_COMPLETED')
    fail('the last frame is no completed status', frames.at(-1));
}
