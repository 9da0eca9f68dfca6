import { ValueError, type ConcurrencyLimit, type Logger, type TlsOptions } from '@agent/core';
import { checkOptionNames, numberOption } from '@agent/core/internal';

export { checkOptionNames };
import type { Authenticator } from '@agent/auth';
import { isTenantName, TENANT_RULE } from './tenant.js';
import { TENANT_HEADER } from './request.js';
import type { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { RateLimiter, RateLimitOptions } from './rate-limit.js';
import type { CallerTaskLimit } from './caller-limit.js';

/** The options every network transport shares: one lifecycle vocabulary. */
export interface TransportOptions {
  /** Where the server listens and what it advertises; port 0 picks a free one. A secure scheme needs `tls`. */
  url: string;
  /** Server side: checks every operation. Client side: with `credentials`, builds what is sent. */
  authenticator?: Authenticator;
  /** Client side: the raw credential, authenticated lazily on the first call. Needs `authenticator`. */
  credentials?: string;
  /** TLS on both sides: certificate/key, trusted CA, mutual TLS (`requestClientCert`). */
  tls?: TlsOptions;
  /** Client side: deadline of each call in ms; 0 = no deadline. Default 30000. */
  timeoutMs?: number;
  /** How long `stop()` lets in-flight calls finish before canceling them (reason `server shutting down`), in ms. Default 10000. */
  stopGraceMs?: number;
  /** Requests larger than this many bytes are refused with PAYLOAD_TOO_LARGE. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Strict schema checks on incoming tasks (unknown fields → VALIDATION_FAILED). Default false. */
  validateSchema?: boolean;
  /** Server side: where unexpected errors are logged (pino-compatible). Default: JSON lines on stderr. */
  logger?: Logger;
  /**
   * Client side: the tenant every call names (at most 128 characters of `[A-Za-z0-9._:-]`), sent
   * through the wire's carrier (`x-tenant`). Default `""`, the default tenant, sent as no carrier at all.
   */
  tenant?: string;
  /**
   * Server side: one `info` line per request through `logger` (operation, transport, status,
   * duration, principal, tenant, task and trace ids; never a credential). Default false.
   */
  logRequests?: boolean;
  /** Server side: where requests, task runs and streams are counted; one instance for every transport of a server. */
  metrics?: PipelineMetrics;
  /**
   * Server side: most task runs at once; past it new tasks are refused at once with UNAVAILABLE (503,
   * `Retry-After`). A number limits this transport alone; one ConcurrencyLimit given to every
   * transport of a server limits them together. Default: no limit.
   */
  maxConcurrentTasks?: number | ConcurrencyLimit;
  /**
   * Server side: most task runs at once of one caller (its principal, or its address when
   * anonymous), so one caller cannot take every slot of `maxConcurrentTasks`; past it its new tasks
   * are refused at once with UNAVAILABLE (503, `Retry-After`, `data.limit: "tasks_per_caller"`). A
   * number counts this transport alone; one CallerTaskLimit given to every transport of a server
   * counts a caller across them. Default: no limit.
   */
  maxConcurrentTasksPerCaller?: number | CallerTaskLimit;
  /**
   * Server side: a token bucket per principal (`{ perSecond, burst? }`) over every operation but
   * cancel; past it RESOURCE_EXHAUSTED (429, `Retry-After`). One RateLimiter given to every
   * transport of a server limits a principal across them. Default: no limit.
   */
  rateLimit?: RateLimitOptions | RateLimiter;
  /**
   * Server side: how long a stream's caller may take too little of what its run produced before its
   * stream is ended with RESOURCE_EXHAUSTED (`data.limit: "stream_stall"`) and a socket it does not
   * drain is closed; the run goes on. In ms; default 30000 (the `@agent/server` README, "Back-pressure").
   */
  streamStallMs?: number;
}

export const TRANSPORT_OPTION_NAMES: readonly (keyof TransportOptions)[] = [
  'url',
  'authenticator',
  'credentials',
  'tls',
  'timeoutMs',
  'stopGraceMs',
  'maxBodyBytes',
  'validateSchema',
  'logger',
  'tenant',
  'logRequests',
  'metrics',
  'maxConcurrentTasks',
  'maxConcurrentTasksPerCaller',
  'rateLimit',
  'streamStallMs',
];

/** Reads the client-side `tenant` option: `""` when absent, a ValueError when it breaks the rule. */
export function tenantOption(value: unknown): string {
  if (value === undefined) return '';
  // The form the server pipeline checks, refused here before anything is sent.
  if (!isTenantName(value))
    throw new ValueError(`tenant must be ${TENANT_RULE}`, { data: { option: 'tenant' } });
  return value;
}

/** The header that carries a non-default tenant (`{}` for the default tenant `""`). */
export function tenantHeaders(tenant: string): Record<string, string> {
  return tenant === '' ? {} : { [TENANT_HEADER]: tenant };
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_STOP_GRACE_MS = 10_000;
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface LifecycleSettings {
  timeoutMs: number;
  stopGraceMs: number;
  maxBodyBytes: number;
}

/** Reads the shared lifecycle numbers with their defaults; 0 is a valid `timeoutMs` (no deadline). */
export function lifecycleSettings(
  options: Pick<TransportOptions, 'timeoutMs' | 'stopGraceMs' | 'maxBodyBytes'>,
): LifecycleSettings {
  return {
    timeoutMs: numberOption('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS),
    stopGraceMs: numberOption('stopGraceMs', options.stopGraceMs, DEFAULT_STOP_GRACE_MS),
    maxBodyBytes: numberOption('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, {
      min: 1,
      integer: true,
    }),
  };
}
