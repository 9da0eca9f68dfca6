import type { AgentClient } from '@agent/client';
import type { CredentialKind } from './presented-credentials.js';

export const TRANSPORT_NAMES = ['http', 'memory', 'sse', 'ws', 'grpc'] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];
export const STREAMING_TRANSPORTS: readonly TransportName[] = ['http', 'memory', 'sse', 'ws', 'grpc'];

export interface CaseContext {
  transport: TransportName;
  /** A client with the configured (valid) credentials, or none when the server has no auth. */
  client: AgentClient;
  /** A client presenting other credentials (`null`: none at all). */
  clientWith(credential: string | null): AgentClient;
  /** The agent address the clients use. */
  baseUrl: string;
  /** Raw HTTP base URL, present for `--transport http`. */
  httpUrl?: string;
  /** Present when the server is expected to authenticate. */
  auth?: { kind: CredentialKind; token: string };
  /** A client acting for a second principal (cases marked `otherPrincipal`). */
  other?: AgentClient;
  /** The second principal's credential as sent on the wire (cases marked `otherPrincipal`). */
  otherAuth?: { kind: CredentialKind; token: string };
  /** Aborts when the case times out. */
  signal: AbortSignal;
  /** Present when the harness controls the server process (cases marked `needsControl`). */
  control?: ServerControl;
}

/** What a harness that started the server can do to it. */
export interface ServerControl {
  /** Stops the server gracefully (SIGTERM); resolves once it exited cleanly, rejects otherwise. */
  stop(): Promise<void>;
}

export interface ConformanceCase {
  id: string;
  title: string;
  /** Transports the case applies to; all when absent. */
  transports?: readonly TransportName[];
  /** `required`: runs only against an authenticating server; `none`: only without auth. */
  auth?: 'required' | 'none';
  /** Runs only when the harness passes `control` (it stops the server, so it runs last, alone). */
  needsControl?: boolean;
  /** Runs only when the harness has a second principal's credential (`otherCredentials`). */
  otherPrincipal?: boolean;
  /** Runs only against a server that serves the agent registry (see `ConformanceOptions.registry`). */
  registry?: boolean;
  /** Runs only against a server that serves A2A 1.0 (see `ConformanceOptions.a2a`). */
  a2a?: boolean;
  run(ctx: CaseContext): Promise<void>;
}
