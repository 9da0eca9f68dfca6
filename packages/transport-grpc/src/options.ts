import type { TransportOptions } from '@agent/server';

/**
 * The shared transport options (`url` is `grpc://host:port` or `grpcs://host:port`; `maxBodyBytes` is
 * the largest message either side sends or accepts) plus the gRPC services this transport can add.
 */
export interface GRPCTransportOptions extends TransportOptions {
  /** Serve the standard `grpc.health.v1.Health` service (no credentials needed). Default false. */
  health?: boolean;
  /** Serve gRPC server reflection (v1 and v1alpha; no credentials needed). Default false. */
  reflection?: boolean;
}

/** The option names GRPCTransport accepts beyond the shared ones. */
export const GRPC_OPTION_NAMES = [
  'health',
  'reflection',
] as const satisfies readonly (keyof GRPCTransportOptions)[];
