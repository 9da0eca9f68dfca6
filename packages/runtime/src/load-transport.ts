import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { ValueError, type Transport } from '@agent/core';
import type { Authenticator } from '@agent/auth';

/** The transports `new Agent({ transport })` accepts by name. */
export const TRANSPORT_NAMES = ['http', 'sse', 'ws', 'grpc', 'memory'] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];

interface TransportPackage {
  module: string;
  className: string;
  /** An address to show when `card.url` is missing; null when the transport takes no URL. */
  exampleUrl: string | null;
}

const PACKAGES: Record<TransportName, TransportPackage> = {
  http: { module: '@agent/transport-http', className: 'HTTPTransport', exampleUrl: 'http://127.0.0.1:8080' },
  sse: { module: '@agent/transport-sse', className: 'SSETransport', exampleUrl: 'http://127.0.0.1:8081' },
  ws: { module: '@agent/transport-ws', className: 'WebSocketTransport', exampleUrl: 'ws://127.0.0.1:8082' },
  grpc: { module: '@agent/transport-grpc', className: 'GRPCTransport', exampleUrl: 'grpc://127.0.0.1:50051' },
  memory: { module: '@agent/transport-memory', className: 'RuntimeTransport', exampleUrl: null },
};

export interface TransportInit {
  /** The address to serve (`card.url`); ignored by `memory`. */
  url: string;
  authenticator?: Authenticator;
  credentials?: string;
}

export function isTransportName(value: unknown): value is TransportName {
  return typeof value === 'string' && (TRANSPORT_NAMES as readonly string[]).includes(value);
}

/**
 * Builds the transport named in `new Agent({ transport: name })`. The transport packages are
 * deliberately not dependencies of the runtime (install only what you use), and a package manager
 * with strict `node_modules` (pnpm) installs the user's transport beside the user's program, not
 * beside the runtime: so the package is resolved from where the program is first (`searchFrom`),
 * and from the runtime itself last.
 */
export function loadTransport(
  name: TransportName,
  init: TransportInit,
  searchFrom: readonly string[] = defaultSearchPaths(),
): Transport {
  const spec = PACKAGES[name];
  if (spec.exampleUrl !== null && !init.url) {
    throw new ValueError(
      `transport: '${name}' needs card.url (the address to serve, e.g. ${spec.exampleUrl})`,
    );
  }
  const module = requireFrom(name, spec.module, searchFrom);
  const Transport = module[spec.className];
  if (typeof Transport !== 'function')
    throw new ValueError(`${spec.module} does not export ${spec.className}`);
  const options: Partial<TransportInit> = spec.exampleUrl === null ? {} : { url: init.url };
  if (init.authenticator) options.authenticator = init.authenticator;
  if (init.credentials !== undefined) options.credentials = init.credentials;
  return new (Transport as new (options: Partial<TransportInit>) => Transport)(options);
}

/** Where the user's program is: the main module, the script node was started with, the working directory. */
function defaultSearchPaths(): string[] {
  const paths: string[] = [];
  if (require.main?.filename) paths.push(require.main.filename);
  const script = process.argv[1];
  if (script && isAbsolute(script)) paths.push(script);
  // createRequire takes a file path; the file need not exist, only its directory matters.
  paths.push(join(process.cwd(), 'package.json'));
  paths.push(__filename);
  return paths;
}

function requireFrom(
  name: TransportName,
  moduleName: string,
  searchFrom: readonly string[],
): Record<string, unknown> {
  for (const from of searchFrom) {
    const load = createRequire(from);
    let path: string;
    try {
      path = load.resolve(moduleName);
    } catch {
      continue;
    }
    try {
      return load(path) as Record<string, unknown>;
    } catch (error) {
      throw new ValueError(
        `transport: '${name}' found ${moduleName} but could not load it: ${(error as Error).message}`,
        { cause: error, data: { transport: name, package: moduleName } },
      );
    }
  }
  const places = [...new Set(searchFrom.map((from) => dirname(from)))].join(', ');
  throw new ValueError(
    `transport: '${name}' needs the ${moduleName} package, which is not installed where this program ` +
      `runs (looked from ${places}): add it to your project, e.g. pnpm add ${moduleName}`,
    { data: { transport: name, package: moduleName } },
  );
}
