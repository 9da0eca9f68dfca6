import { ValueError, type TlsOptions } from '@agent/core';
import { numberOption, optionNames } from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import { DEFAULT_TIMEOUT_MS } from '@agent/server';
import { DEFAULT_MAX_RESPONSE_BYTES } from '@agent/transport-http';
import { isBinding, type A2ABinding } from './bindings.js';

export interface A2ATransportOptions {
  /** Builds what is sent from `credentials` (the same authenticators as the other transports). */
  authenticator?: Authenticator;
  /** The raw credential, authenticated lazily on the first call. Needs `authenticator`. */
  credentials?: string;
  /** Deadline of each call in ms (a stream: until it begins); 0 = none. Default 30000. */
  timeoutMs?: number;
  /** Sent on every call instead of the tenant the agent card's interface names. Default: the card's. */
  tenant?: string;
  /** Protocol bindings in order of preference. Default: the order of the card's `supportedInterfaces`. */
  bindings?: A2ABinding[];
  /** Trusted CA, client certificate (mutual TLS), SNI name. */
  tls?: TlsOptions;
  /** Answers (or one stream event) above this many bytes are refused with PAYLOAD_TOO_LARGE. Default 4 MiB. */
  maxResponseBytes?: number;
}

export const A2A_TRANSPORT_OPTION_NAMES = optionNames<A2ATransportOptions>({
  authenticator: true,
  credentials: true,
  timeoutMs: true,
  tenant: true,
  bindings: true,
  tls: true,
  maxResponseBytes: true,
});

export interface A2ATransportSettings {
  timeoutMs: number;
  maxResponseBytes: number;
  tenant: string | undefined;
  bindings: A2ABinding[] | undefined;
}

export function transportSettings(options: A2ATransportOptions): A2ATransportSettings {
  const { tenant, bindings } = options;
  if (tenant !== undefined && (typeof tenant !== 'string' || tenant === '')) {
    throw new ValueError('tenant must be a non-empty string', { data: { option: 'tenant' } });
  }
  if (
    bindings !== undefined &&
    (!Array.isArray(bindings) || bindings.length === 0 || !bindings.every((binding) => isBinding(binding)))
  ) {
    throw new ValueError("bindings must be a non-empty list of 'JSONRPC' and 'HTTP+JSON'", {
      data: { option: 'bindings' },
    });
  }
  return {
    timeoutMs: numberOption('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS),
    maxResponseBytes: numberOption('maxResponseBytes', options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, {
      min: 1,
    }),
    tenant,
    bindings: bindings === undefined ? undefined : [...bindings],
  };
}
