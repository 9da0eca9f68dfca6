import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Send the body with chunked encoding (no Content-Length). */
  chunked?: boolean;
  ca?: string;
}

/** One request on its own connection (no agent), so a test never leaves a pooled socket behind. */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const target = new URL(url);
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const headers: OutgoingHttpHeaders = { ...options.headers };
  if (payload !== undefined && !options.chunked) headers['content-length'] = Buffer.byteLength(payload);
  if (payload !== undefined && headers['content-type'] === undefined)
    headers['content-type'] = 'application/json';
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers,
        agent: false,
        ca: options.ca,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined && options.chunked) {
      // Several writes so the server sees a stream, not one buffer.
      const step = Math.max(1, Math.ceil(payload.length / 4));
      for (let i = 0; i < payload.length; i += step) req.write(payload.slice(i, i + step));
    } else if (payload !== undefined) {
      req.write(payload);
    }
    req.end();
  });
}
