import { AgentClient } from '@agent/client';
import { ValueError, type Transport } from '@agent/core';
import { A2A_CARD_PATH } from './cases/a2a-cases.js';
import { ALL_CASES } from './cases/index.js';
import type { CaseContext, ConformanceCase, ServerControl, TransportName } from './context.js';
import {
  authorizationHeader,
  PresentedCredentials,
  presentedToken,
  type CredentialKind,
} from './presented-credentials.js';
import { rawHttp } from './raw-http.js';
import { createClientTransport, type InProcessTarget } from './transports.js';

export interface ConformanceOptions {
  transport: TransportName;
  /** The agent URL for the transport (`runtime://conformance` is used for memory when absent). */
  url?: string;
  /** Raw HTTP base URL for the wire cases; defaults to `url` with `--transport http`. */
  httpUrl?: string;
  /** Credentials the server accepts; their presence makes the auth cases run. */
  credentials?: { kind: CredentialKind; value: string };
  /**
   * Another credential of the same kind that the server accepts as a second principal; its presence
   * makes the cases run that check one principal's tasks are out of the other's reach.
   */
  otherCredentials?: { kind: CredentialKind; value: string };
  inProcess?: InProcessTarget;
  /** Per-case time limit. Default 30000 ms. */
  caseTimeoutMs?: number;
  /** Only cases whose id matches. */
  filter?: RegExp;
  cases?: readonly ConformanceCase[];
  onResult?: (result: CaseResult) => void;
  /** Lets the cases marked `needsControl` stop the server; without it they do not run. */
  control?: ServerControl;
  /**
   * Whether the server serves the agent registry, whose cases run only then (over http only: the
   * registry is HTTP). `true`: they run, and fail against a server without one; `false`: they do
   * not. Absent: asked of the server, {@link servesRegistry}.
   */
  registry?: boolean;
  /**
   * Whether the server serves A2A 1.0, whose cases run only then (over http only). `true`: they
   * run, and fail against a server without it; `false`: they do not. Absent: asked of the server,
   * {@link servesA2A}.
   */
  a2a?: boolean;
}

export interface CaseResult {
  id: string;
  title: string;
  transport: TransportName;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  error?: string;
}

function applies(
  testCase: ConformanceCase,
  options: ConformanceOptions,
  served: { registry: boolean; a2a: boolean },
): boolean {
  if (testCase.transports && !testCase.transports.includes(options.transport)) return false;
  if (testCase.registry && !served.registry) return false;
  if (testCase.a2a && !served.a2a) return false;
  if (testCase.auth === 'required' && !options.credentials) return false;
  if (testCase.auth === 'none' && options.credentials) return false;
  if (testCase.needsControl && !options.control) return false;
  if (testCase.otherPrincipal && !options.otherCredentials) return false;
  return !options.filter || options.filter.test(testCase.id);
}

/**
 * Whether the server at `httpUrl` serves the agent registry: its `GET /registry/agents` answers
 * anything but 404 (a listing, or a refusal such as 401 when the credentials do not fit), where a
 * server without it answers 404 for an unknown route. A server that cannot be asked serves none
 * here: the other cases then report what is wrong.
 */
export async function servesRegistry(
  httpUrl: string,
  auth?: { kind: CredentialKind; token: string },
): Promise<boolean> {
  const headers: Record<string, string> = auth
    ? { authorization: authorizationHeader(auth.kind, auth.token) }
    : {};
  try {
    const res = await rawHttp(httpUrl, '/registry/agents?page_size=1', {
      headers,
      signal: AbortSignal.timeout(10_000),
    });
    return res.status !== 404;
  } catch {
    return false;
  }
}

/**
 * Whether the server at `httpUrl` serves A2A 1.0: its public card, `GET
 * /.well-known/agent-card.json`, answers 200 with a `supportedInterfaces` array (no credentials:
 * the card is public). A server that cannot be asked serves none here.
 */
export async function servesA2A(httpUrl: string): Promise<boolean> {
  try {
    const res = await rawHttp(httpUrl, A2A_CARD_PATH, { signal: AbortSignal.timeout(10_000) });
    const card = res.json as { supportedInterfaces?: unknown } | undefined;
    return res.status === 200 && Array.isArray(card?.supportedInterfaces);
  } catch {
    return false;
  }
}

export async function runConformance(options: ConformanceOptions): Promise<CaseResult[]> {
  const url = options.url ?? (options.transport === 'memory' ? 'runtime://conformance' : undefined);
  if (!url) throw new Error(`--url is required for --transport ${options.transport}`);
  const kind = options.credentials?.kind ?? 'apikey';
  const token = options.credentials
    ? presentedToken(options.credentials.kind, options.credentials.value)
    : undefined;
  const other = options.otherCredentials;
  if (other && other.kind !== options.credentials?.kind)
    throw new ValueError(
      `the second principal's credential (${other.kind}) must be of the kind of the first (${options.credentials?.kind ?? 'none'})`,
    );
  const opened: Transport[] = [];
  const clientFor = (credential: string | null | undefined): AgentClient => {
    const transport = createClientTransport({
      transport: options.transport,
      url,
      inProcess: options.inProcess,
      ...(credential ? { authenticator: new PresentedCredentials(kind), credentials: credential } : {}),
    });
    opened.push(transport);
    return new AgentClient({ transport, baseUrl: url });
  };
  const otherToken = other ? presentedToken(other.kind, other.value) : undefined;
  const httpUrl = options.httpUrl ?? (options.transport === 'http' ? url : undefined);
  const auth = token ? { kind, token } : undefined;
  const cases = options.cases ?? ALL_CASES;
  // Asked only when a registry case could run.
  const registry =
    options.transport === 'http' &&
    httpUrl !== undefined &&
    cases.some((c) => c.registry && (!options.filter || options.filter.test(c.id))) &&
    (options.registry ?? (await servesRegistry(httpUrl, auth)));
  const a2a =
    options.transport === 'http' &&
    httpUrl !== undefined &&
    cases.some((c) => c.a2a && (!options.filter || options.filter.test(c.id))) &&
    (options.a2a ?? (await servesA2A(httpUrl)));
  const client = clientFor(token);
  const otherClient = other ? clientFor(otherToken) : undefined;
  const results: CaseResult[] = [];
  const timeoutMs = options.caseTimeoutMs ?? 30_000;
  try {
    for (const testCase of cases) {
      if (!applies(testCase, options, { registry, a2a })) continue;
      const controller = new AbortController();
      const ctx: CaseContext = {
        transport: options.transport,
        client,
        clientWith: (credential) => clientFor(credential),
        baseUrl: url,
        httpUrl,
        auth,
        signal: controller.signal,
      };
      if (otherClient) ctx.other = otherClient;
      if (other && otherToken) ctx.otherAuth = { kind: other.kind, token: otherToken };
      if (options.control) ctx.control = options.control;
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const result: CaseResult = {
        id: testCase.id,
        title: testCase.title,
        transport: options.transport,
        status: 'passed',
        durationMs: 0,
      };
      try {
        await Promise.race([
          testCase.run(ctx),
          new Promise((_, reject) => {
            timer = setTimeout(() => {
              controller.abort();
              reject(new Error(`timed out after ${timeoutMs} ms`));
            }, timeoutMs);
          }),
        ]);
      } catch (error) {
        result.status = 'failed';
        result.error = error instanceof Error ? error.message : String(error);
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
      result.durationMs = Math.round(performance.now() - started);
      results.push(result);
      options.onResult?.(result);
    }
  } finally {
    await Promise.allSettled(opened.map((t) => t.stop()));
  }
  return results;
}

export function summarize(results: readonly CaseResult[]): { passed: number; failed: number } {
  return {
    passed: results.filter((r) => r.status === 'passed').length,
    failed: results.filter((r) => r.status === 'failed').length,
  };
}
