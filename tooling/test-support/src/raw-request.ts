/**
 * A bare node:http(s) client for checking exact wire shapes. Each request gets its own connection
 * (no agent), so a test never leaves a pooled socket behind.
 */
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
  /** Default: GET without a body, POST with one. */
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** The Content-Type sent with a body unless `headers` has one; `false` sends none. Default JSON. */
  contentType?: string | false;
  /** Send the body in several chunks with chunked encoding (also implied by a Transfer-Encoding header). */
  chunked?: boolean;
  /** CA certificate(s) to trust for https URLs. */
  ca?: string;
}

export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const target = new URL(url);
  const payload: string | Buffer | undefined =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string' || Buffer.isBuffer(options.body)
        ? options.body
        : JSON.stringify(options.body);
  const headers: OutgoingHttpHeaders = { ...options.headers };
  const chunked = options.chunked === true || headers['transfer-encoding'] !== undefined;
  if (payload !== undefined && !chunked) headers['content-length'] = Buffer.byteLength(payload);
  const contentType = options.contentType ?? 'application/json';
  if (payload !== undefined && contentType !== false && headers['content-type'] === undefined) {
    headers['content-type'] = contentType;
  }
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
    if (payload !== undefined && chunked) {
      // Several writes so the server sees a stream, not one buffer.
      const bytes = Buffer.from(payload);
      const step = Math.max(1, Math.ceil(bytes.length / 4));
      for (let i = 0; i < bytes.length; i += step) req.write(bytes.subarray(i, i + step));
    } else if (payload !== undefined) {
      req.write(payload);
    }
    req.end();
  });
}
