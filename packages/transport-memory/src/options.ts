import type { TransportOptions } from '@agent/server';

/**
 * The shared transport options that mean something in process: there is no URL, port, TLS or body
 * size, the rest is the vocabulary every transport uses, the pipeline's request log, metrics and
 * limits included.
 */
export type RuntimeTransportOptions = Pick<
  TransportOptions,
  | 'authenticator'
  | 'credentials'
  | 'timeoutMs'
  | 'stopGraceMs'
  | 'validateSchema'
  | 'logger'
  | 'tenant'
  | 'logRequests'
  | 'metrics'
  | 'maxConcurrentTasks'
  | 'rateLimit'
>;

/** Every option name RuntimeTransport accepts; any other is a ValueError. */
export const RUNTIME_OPTION_NAMES = [
  'authenticator',
  'credentials',
  'timeoutMs',
  'stopGraceMs',
  'validateSchema',
  'logger',
  'tenant',
  'logRequests',
  'metrics',
  'maxConcurrentTasks',
  'rateLimit',
] as const satisfies readonly (keyof RuntimeTransportOptions)[];
