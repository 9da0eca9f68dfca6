/** One HTTP request over raw `node:http` and its whole answer: the bench's own client, no library's cost. */
import http from 'node:http';

/** Bound of every request the bench makes itself: far above what each takes. */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface Answer {
  status: number;
  body: string;
  /** performance.now() when the whole answer had arrived. */
  at: number;
}

export function request(
  agent: http.Agent,
  base: URL,
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            at: performance.now(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed (its keep-alive timeout) just as this request took it:
      // a read is safe to send again on a fresh one, as node's documentation advises.
      if (method === 'GET' && req.reusedSocket && error.code === 'ECONNRESET')
        request(agent, base, method, path, body, headers).then(resolve, reject);
      else reject(new Error(`${method} ${base.port}${path}: ${error.message}`));
    });
    req.end(body);
  });
}
