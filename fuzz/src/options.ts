/** The harness's flags, their defaults in the full and the smoke run, and their parsing. */

export const TARGETS = ['http-node', 'http-express', 'sse', 'ws', 'grpc'] as const;
export type Target = (typeof TARGETS)[number];

export const MODES = ['malformed', 'slow', 'slowloris', 'kill9'] as const;
export type Mode = (typeof MODES)[number];

export interface FuzzOptions {
  seed: number;
  smoke: boolean;
  /** Malformed requests per transport (the time cap may stop earlier). */
  count: number;
  /** Time cap of the malformed requests, per transport, in seconds. */
  seconds: number;
  transports: Target[];
  modes: Mode[];
  /** Replay one malformed case (with one transport). */
  caseIndex: number | undefined;
  /** Malformed requests in flight at once. */
  concurrency: number;
  /** An answer or a close must come within this many ms. */
  hangMs: number;
  /** Non-reading stream consumers per streaming transport. */
  nonReaders: number;
  /** How long the non-readers stay connected, in seconds. */
  slowSeconds: number;
  /** The store of the slow-consumer mode's server: `memory` (the default) or a fresh SQLite file. */
  slowStore: 'memory' | 'sqlite';
  /** Run the non-readers of every streaming transport in one window (the smoke run does). */
  slowTogether: boolean;
  /** Slowloris connections per kind. */
  slowloris: number;
  /** How long slowloris connections are watched, in seconds. */
  slowlorisSeconds: number;
  /** kill -9 rounds. */
  killRounds: number;
  /** Where the JSON report goes. */
  reportPath: string | undefined;
  /** Progress lines (stderr by default). */
  log: (line: string) => void;
}

export function defaults(smoke: boolean): Omit<FuzzOptions, 'seed' | 'log'> {
  return smoke
    ? {
        smoke: true,
        count: 500,
        seconds: 5,
        transports: [...TARGETS],
        modes: [...MODES],
        caseIndex: undefined,
        concurrency: 8,
        hangMs: 10_000,
        nonReaders: 20,
        slowSeconds: 10,
        slowStore: 'memory',
        slowTogether: true,
        slowloris: 10,
        slowlorisSeconds: 5,
        killRounds: 1,
        reportPath: undefined,
      }
    : {
        smoke: false,
        count: 100_000,
        seconds: 35,
        transports: [...TARGETS],
        modes: [...MODES],
        caseIndex: undefined,
        concurrency: 8,
        hangMs: 10_000,
        nonReaders: 200,
        slowSeconds: 60,
        slowStore: 'memory',
        slowTogether: false,
        slowloris: 50,
        slowlorisSeconds: 100,
        killRounds: 3,
        reportPath: undefined,
      };
}

export const USAGE = `pnpm fuzz [-- flags]

  --smoke              small bounded run (< 60 s): 500 requests per transport, 20 non-readers for 10 s, one kill -9 round
  --seed N             replay a run (every run prints its seed)
  --count N            malformed requests per transport (full: 100000)
  --seconds N          time cap of the malformed requests per transport (full: 35, smoke: 5)
  --transport LIST     comma-separated: ${TARGETS.join(',')}
  --only LIST          comma-separated modes: ${MODES.join(',')}
  --case N             replay malformed case N (with --seed and one --transport); prints the request and the answer
  --concurrency N      malformed requests in flight (8)
  --hang-ms N          an answer or a close must come within N ms (10000)
  --non-readers N      non-reading consumers per streaming transport (full: 200, smoke: 20)
  --slow-seconds N     how long they stay (full: 60, smoke: 10)
  --slow-store S       the server's store meanwhile: memory (default) or sqlite (a fresh file)
  --slowloris N        slowloris connections per kind (full: 50, smoke: 10)
  --slowloris-seconds N  how long they are watched (full: 100, smoke: 5)
  --kill-rounds N      kill -9 rounds (full: 3, smoke: 1)
  --report PATH        JSON report path (default <tmpdir>/agent-fuzz/fuzz-<seed>.json)
`;

function list<T extends string>(value: string, allowed: readonly T[], flag: string): T[] {
  const items = value.split(',').filter(Boolean);
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item)) {
      throw new Error(`${flag}: unknown value ${JSON.stringify(item)}; expected ${allowed.join(', ')}`);
    }
  }
  return items as T[];
}

function int(value: string | undefined, flag: string, min = 0): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min)
    throw new Error(`${flag} needs a whole number ≥ ${min}`);
  return n;
}

export function parseArgs(argv: string[], log: (line: string) => void): FuzzOptions | 'help' {
  const args = argv.filter((a) => a !== '--');
  if (args.includes('--help') || args.includes('-h')) return 'help';
  const smoke = args.includes('--smoke');
  const options: FuzzOptions = {
    ...defaults(smoke),
    seed: Math.floor(Math.random() * 2 ** 31),
    log,
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    const next = (): string | undefined => args[++i];
    switch (flag) {
      case '--smoke':
        break;
      case '--seed':
        options.seed = int(next(), flag);
        break;
      case '--count':
        options.count = int(next(), flag, 1);
        break;
      case '--seconds':
        options.seconds = int(next(), flag, 1);
        break;
      case '--transport':
        options.transports = list(next() ?? '', TARGETS, flag);
        break;
      case '--only':
        options.modes = list(next() ?? '', MODES, flag);
        break;
      case '--case':
        options.caseIndex = int(next(), flag);
        break;
      case '--concurrency':
        options.concurrency = int(next(), flag, 1);
        break;
      case '--hang-ms':
        options.hangMs = int(next(), flag, 100);
        break;
      case '--non-readers':
        options.nonReaders = int(next(), flag, 1);
        break;
      case '--slow-seconds':
        options.slowSeconds = int(next(), flag, 1);
        break;
      case '--slow-store': {
        const store = next();
        if (store !== 'memory' && store !== 'sqlite')
          throw new Error(`--slow-store takes memory or sqlite, not ${store}`);
        options.slowStore = store;
        break;
      }
      case '--slowloris':
        options.slowloris = int(next(), flag, 0);
        break;
      case '--slowloris-seconds':
        options.slowlorisSeconds = int(next(), flag, 1);
        break;
      case '--kill-rounds':
        options.killRounds = int(next(), flag, 0);
        break;
      case '--report':
        options.reportPath = next();
        break;
      default:
        throw new Error(`unknown flag ${flag}\n\n${USAGE}`);
    }
  }
  if (options.caseIndex !== undefined) {
    if (options.transports.length !== 1) throw new Error('--case needs exactly one --transport');
    options.modes = ['malformed'];
  }
  return options;
}
