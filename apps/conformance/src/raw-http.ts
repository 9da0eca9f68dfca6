/** A minimal raw HTTP client for the cases that check bytes on the wire, not the client library. */
import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
}

export function rawHttp(baseUrl: string, path: string, init: RawRequest = {}): Promise<RawResponse> {
  const url = new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'GET',
        headers: { connection: 'close', ...init.headers },
        // A socket of its own, never pooled: an answer that says keep-alive to a request that said
        // close (or breaks its connection otherwise) cannot spill into the next request.
        agent: false,
        signal: init.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A server may answer (413) and close before the whole body is written: the answer counts.
      if (answered && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      reject(error);
    });
    if (init.body !== undefined) req.end(init.body);
    else req.end();
  });
}

export function postJson(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return rawHttp(baseUrl, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
