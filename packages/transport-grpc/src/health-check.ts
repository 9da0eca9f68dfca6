/**
 * The client side of the standard `grpc.health.v1` service, so a caller (an orchestrator's probe, the
 * conformance suite) can ask a gRPC port what `/readyz` tells on the HTTP-based ones.
 */
import { AgentError, UnavailableError, ValueError, type TlsOptions } from '@agent/core';
import { parseTransportUrl } from '@agent/core/internal';
import { formatHostPort } from '@agent/server';
import { makeGenericClientConstructor, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { fromServiceError } from './grpc-errors.js';
import { channelCredentials } from './tls.js';

/** What the health service answers: `SERVING` while ready, `NOT_SERVING` from the moment a stop begins. */
export type HealthStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN' | 'UNKNOWN';

export interface HealthCheckOptions {
  /** The service asked about; default `''`, the server as a whole. */
  service?: string;
  /** TLS for a `grpcs://` URL (CA, client certificate for mutual TLS). */
  tls?: TlsOptions;
  /** Deadline in ms; default 5000, 0 = none. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

type CheckResponse = { status?: unknown };
type Check = (
  request: { service: string },
  options: { deadline?: number },
  callback: (error: ServiceError | null, response?: CheckResponse) => void,
) => { cancel(): void };

const HealthClient = makeGenericClientConstructor(
  healthService as unknown as ServiceDefinition,
  'grpc.health.v1.Health',
);

const STATUSES: readonly HealthStatus[] = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

function statusOf(value: unknown): HealthStatus {
  if (typeof value === 'number') return STATUSES[value] ?? 'UNKNOWN';
  return STATUSES.includes(value as HealthStatus) ? (value as HealthStatus) : 'UNKNOWN';
}

/**
 * Asks a `grpc://` or `grpcs://` server's health service (a `GRPCTransport` started with
 * `health: true`) for its status. Rejects with the typed error of a failed call: `UNAVAILABLE` when
 * nothing answers, `METHOD_NOT_FOUND` when the server has no health service.
 */
export function checkHealth(url: string, options: HealthCheckOptions = {}): Promise<HealthStatus> {
  const address = parseTransportUrl(url);
  if (address.scheme !== 'grpc' && address.scheme !== 'grpcs') {
    return Promise.reject(new ValueError(`checkHealth needs a grpc:// or grpcs:// URL, got ${url}`));
  }
  const client = new HealthClient(
    formatHostPort(address.host, address.port),
    channelCredentials(address.secure, options.tls),
  );
  const check = (client as unknown as { Check: Check }).Check.bind(client);
  const timeoutMs = options.timeoutMs ?? 5000;
  const signal = options.signal;
  return new Promise<HealthStatus>((resolve, reject) => {
    if (signal?.aborted) {
      reject(AgentError.from(signal.reason));
      return;
    }
    const onAbort = (): void => call.cancel();
    const call = check(
      { service: options.service ?? '' },
      timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {},
      (error, response) => {
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) reject(AgentError.from(signal.reason));
        else if (error) reject(fromServiceError(error));
        else if (!response) reject(new UnavailableError('The health service sent no answer'));
        else resolve(statusOf(response.status));
      },
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  }).finally(() => client.close());
}
