/**
 * `GET /metrics` on the HTTP port: the Prometheus text of the server's metrics. A scraper is not a
 * principal of the agent, so this route does not open a pipeline call (no authenticator, no tenant,
 * not counted as a request): it has its own rule, an optional bearer token compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnauthenticatedError } from '@agent/core';
import { PROMETHEUS_CONTENT_TYPE, type PipelineMetrics } from '@agent/server';
import { writeError } from '@agent/server/node';
import type { HttpEndpoint, HttpRouteContext, HttpRoutes } from '@agent/transport-http';

export const METRICS_PATH = '/metrics';

export function metricsRoutes(metrics: PipelineMetrics, token: string | null): HttpRoutes {
  const expected = token === null ? undefined : digest(token);
  return {
    endpoints(context: HttpRouteContext): HttpEndpoint[] {
      return [
        {
          method: 'GET',
          path: `${context.basePath}${METRICS_PATH}`,
          serve(req: IncomingMessage, res: ServerResponse): void {
            if (expected && !presents(req, expected)) {
              writeError(res, new UnauthenticatedError('The metrics token is missing or wrong'), {
                'www-authenticate': 'Bearer realm="metrics"',
              });
              return;
            }
            const body = metrics.prometheus();
            res.writeHead(200, {
              'content-type': PROMETHEUS_CONTENT_TYPE,
              'content-length': Buffer.byteLength(body),
              'cache-control': 'no-store',
            });
            res.end(body);
          },
        },
      ];
    },
  };
}

/** Hashed first, so the comparison takes the same time whatever the length of what was sent. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function presents(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}
