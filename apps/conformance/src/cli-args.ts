/** The conformance CLI's arguments: parsing, and every check that needs no server. */
import path from 'node:path';
import { ValueError } from '@agent/core';
import { ALL_CASES } from './cases/index.js';
import { TRANSPORT_NAMES, type TransportName } from './context.js';
import type { CredentialKind } from './presented-credentials.js';

export interface CliArgs {
  /** Absent only for `--transport memory`. */
  url?: string;
  httpUrl?: string;
  transport: TransportName;
  credentials?: { kind: CredentialKind; value: string };
  /** A second principal's credential, of the same kind as `credentials`. */
  otherCredentials?: { kind: CredentialKind; value: string };
  /** Absolute path of the JUnit XML file to write. */
  junit?: string;
  filter?: RegExp;
  timeoutMs?: number;
  /** `--registry`: the server serves the agent registry, so its cases must run (else: asked of the server). */
  registry?: boolean;
  /** `--a2a`: the server serves A2A 1.0, so its cases must run (else: asked of the server). */
  a2a?: boolean;
  /** `--help`: print the usage and run nothing. */
  help?: boolean;
}

export const USAGE = `usage: pnpm conformance -- --url URL [--transport http|sse|ws|grpc] [options]
       pnpm conformance -- --transport memory [options]
options: --api-key KEY | --bearer JWT | --basic USER:PASS   credentials the server accepts
         --other-api-key KEY | --other-bearer JWT | --other-basic USER:PASS
                            a second principal's credential, of the same kind: checks that it
                            cannot reach the first one's tasks
         --http-url URL     raw HTTP base for the wire cases (--transport http), when not --url
         --registry         the server serves the agent registry: its cases must run and pass
                            (without it they run when GET /registry/agents is not a 404)
         --a2a              the server serves A2A 1.0: its cases must run and pass (without it
                            they run when GET /.well-known/agent-card.json answers 200 with
                            supportedInterfaces)
         --junit FILE       write JUnit XML (relative to the directory the command runs in)
         --filter REGEX     only the cases whose id matches
         --timeout-ms N     per-case limit (default 30000)
         --help             this text
exit: 0 every case passed, 1 a case failed, 2 the run could not start (bad option, unreachable
      server) or write its report`;

const CREDENTIAL_OPTIONS: Record<string, CredentialKind> = {
  '--api-key': 'apikey',
  '--bearer': 'bearer',
  '--basic': 'basic',
};
/** The second principal's credential, one per kind of the first. */
const OTHER_CREDENTIAL_OPTIONS: Record<string, CredentialKind> = {
  '--other-api-key': 'apikey',
  '--other-bearer': 'bearer',
  '--other-basic': 'basic',
};
const VALUE_OPTIONS = ['--url', '--transport', '--http-url', '--junit', '--filter', '--timeout-ms'];
/** Options that take no value. */
const FLAG_OPTIONS = ['--registry', '--a2a'];
const OPTIONS = [
  ...VALUE_OPTIONS,
  ...Object.keys(CREDENTIAL_OPTIONS),
  ...Object.keys(OTHER_CREDENTIAL_OPTIONS),
  ...FLAG_OPTIONS,
  '--help',
];

/** The URL schemes each network transport's client speaks. */
const SCHEMES: Record<Exclude<TransportName, 'memory'>, readonly string[]> = {
  http: ['http', 'https'],
  sse: ['http', 'https'],
  ws: ['ws', 'wss'],
  grpc: ['grpc', 'grpcs'],
};

/**
 * Reads the CLI's arguments (a lone `--`, which `pnpm conformance -- …` passes on, is ignored).
 * `cwd` is where a relative `--junit` path starts: under pnpm, the directory the user ran it in.
 * Throws `ValueError` with a one-line message for anything it cannot use.
 */
export function parseArgs(argv: readonly string[], cwd: string = process.cwd()): CliArgs {
  const given = new Map<string, string>();
  const rest = argv.filter((a) => a !== '--');
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--help' || arg === '-h') return { transport: 'http', help: true };
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!OPTIONS.includes(name)) {
      const what = name.startsWith('-') ? `unknown option ${name}` : `unexpected argument ${name}`;
      throw new ValueError(`${what}; the options are ${OPTIONS.join(', ')}`);
    }
    if (FLAG_OPTIONS.includes(name)) {
      if (eq > 0) throw new ValueError(`${name} takes no value`);
      if (given.has(name)) throw new ValueError(`${name} is given twice`);
      given.set(name, '');
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else if (rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) value = rest[++i];
    if (value === undefined || value === '') throw new ValueError(`${name} needs a value`);
    if (given.has(name)) throw new ValueError(`${name} is given twice`);
    given.set(name, value);
  }

  const transport = given.get('--transport') ?? 'http';
  if (!(TRANSPORT_NAMES as readonly string[]).includes(transport))
    throw new ValueError(`unknown transport ${transport}; use one of ${TRANSPORT_NAMES.join(', ')}`);
  const args: CliArgs = { transport: transport as TransportName };

  const url = given.get('--url');
  if (args.transport === 'memory') {
    if (url !== undefined) throw new ValueError('--transport memory runs in-process and takes no --url');
  } else {
    if (url === undefined) throw new ValueError(`--url is required with --transport ${args.transport}`);
    args.url = checkUrl(url, args.transport);
  }

  const httpUrl = given.get('--http-url');
  if (httpUrl !== undefined) {
    if (args.transport !== 'http')
      throw new ValueError('--http-url is for the wire cases, which run only with --transport http');
    args.httpUrl = checkUrl(httpUrl, 'http', '--http-url');
  }

  if (given.has('--registry')) {
    if (args.transport !== 'http')
      throw new ValueError(
        '--registry: the registry is served over HTTP; its cases run with --transport http',
      );
    args.registry = true;
  }

  if (given.has('--a2a')) {
    if (args.transport !== 'http')
      throw new ValueError('--a2a: A2A is served over HTTP; its cases run with --transport http');
    args.a2a = true;
  }

  const credentials = Object.keys(CREDENTIAL_OPTIONS).filter((o) => given.has(o));
  if (credentials.length > 1)
    throw new ValueError(`give one of --api-key, --bearer, --basic, not ${credentials.join(' and ')}`);
  if (credentials.length === 1) {
    const option = credentials[0]!;
    const value = given.get(option)!;
    if (option === '--basic' && !value.includes(':')) throw new ValueError('--basic needs USER:PASS');
    args.credentials = { kind: CREDENTIAL_OPTIONS[option]!, value };
  }
  const others = Object.keys(OTHER_CREDENTIAL_OPTIONS).filter((o) => given.has(o));
  if (others.length > 1)
    throw new ValueError(
      `give one of --other-api-key, --other-bearer, --other-basic, not ${others.join(' and ')}`,
    );
  if (others.length === 1) {
    const option = others[0]!;
    const kind = OTHER_CREDENTIAL_OPTIONS[option]!;
    const first = Object.keys(CREDENTIAL_OPTIONS).find((o) => CREDENTIAL_OPTIONS[o] === kind)!;
    if (args.credentials?.kind !== kind)
      throw new ValueError(
        `${option} is a second principal's credential: it needs ${first} for the first one`,
      );
    const value = given.get(option)!;
    if (kind === 'basic' && !value.includes(':')) throw new ValueError(`${option} needs USER:PASS`);
    if (value === args.credentials.value)
      throw new ValueError(`${option} must differ from ${first}: it names a second principal`);
    args.otherCredentials = { kind, value };
  }

  const junit = given.get('--junit');
  if (junit !== undefined) args.junit = path.resolve(cwd, junit);

  const filter = given.get('--filter');
  if (filter !== undefined) {
    try {
      args.filter = new RegExp(filter);
    } catch (error) {
      throw new ValueError(`--filter ${filter} is not a regular expression: ${(error as Error).message}`);
    }
    if (!ALL_CASES.some((c) => args.filter!.test(c.id)))
      throw new ValueError(`--filter ${filter} matches no case id (they look like task.echo, http.healthz)`);
  }

  const timeout = given.get('--timeout-ms');
  if (timeout !== undefined) {
    if (!/^[1-9]\d*$/.test(timeout))
      throw new ValueError(`--timeout-ms needs a whole number of milliseconds, got ${timeout}`);
    args.timeoutMs = Number(timeout);
  }
  return args;
}

/** The URL, when its scheme is one the transport speaks; otherwise a message that says what fits. */
function checkUrl(url: string, transport: keyof typeof SCHEMES, option = '--url'): string {
  const accepted = SCHEMES[transport];
  const wanted = accepted.map((s) => `${s}://`).join(' or ');
  let scheme = '';
  try {
    scheme = new URL(url).protocol.replace(/:$/, '');
  } catch {
    // not a URL at all: reported below like an unknown scheme
  }
  if (accepted.includes(scheme)) return url;
  const fits = (Object.keys(SCHEMES) as Array<keyof typeof SCHEMES>).filter((t) =>
    SCHEMES[t].includes(scheme),
  );
  if (fits.length === 0) throw new ValueError(`${option} ${url} does not start with ${wanted}`);
  throw new ValueError(
    `${option} ${url} does not fit --transport ${transport}, which takes ${wanted} URLs` +
      (option === '--url' ? `; for this URL use --transport ${fits.join(' or ')}` : ''),
  );
}
