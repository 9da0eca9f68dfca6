/** Run settings: the full run's defaults, the quick (CI smoke) mode's, and BENCH_* overrides. */

export interface Settings {
  quick: boolean;
  /** Rounds: every subject runs once per round, in the same order; the report takes medians. */
  rounds: number;
  /** Measured seconds per subject. */
  seconds: number;
  /** Seconds of the same load before measuring (JIT, connection set-up, caches). */
  warmupSeconds: number;
  /** Concurrent connections (HTTP) or calls in flight (the other wires) of the main subjects. */
  connections: number;
  /** Concurrency levels of the sweep. */
  sweep: number[];
  /** Payload sizes in bytes, and the connections they run at (big bodies at 32 would only queue). */
  payloadBytes: number[];
  payloadConnections: number;
  /** Running tasks canceled by the cancel subjects. */
  cancelTasks: number;
  /** Tasks each cancel subject cancels one at a time before those it times (timed apart, as cold). */
  cancelWarmup: number;
  /** Tasks the replicas subject submits over three replicas on PostgreSQL. */
  replicaTasks: number;
  /** Idle WebSocket connections held open by the memory subject. */
  idleWsConnections: number;
  /** Seconds of HTTP echo load on the profiled reference server. */
  profileSeconds: number;
  /**
   * One server child per configuration for the whole run instead of a fresh one per subject and
   * round: quick mode's way to fit in seconds (its peak RSS figures are then shared).
   */
  reuseServers: boolean;
}

const KIB = 1024;

/** A BENCH_* variable's number, or `fallback` when unset; throws on anything else. */
export function envNumber(name: string, fallback: number, { integer = true, min = 1 } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value)))
    throw new Error(`${name}=${raw}: expected ${integer ? 'a whole number' : 'a number'} from ${min}`);
  return value;
}

export function loadSettings(quick: boolean): Settings {
  if (quick) {
    return {
      quick,
      rounds: 1,
      seconds: envNumber('BENCH_DURATION', 0.5, { integer: false, min: 0.1 }),
      warmupSeconds: 0,
      connections: 4,
      sweep: [1, 8],
      payloadBytes: [KIB, 64 * KIB, 1024 * KIB],
      payloadConnections: 2,
      cancelTasks: 50,
      cancelWarmup: 10,
      replicaTasks: 100,
      idleWsConnections: 200,
      profileSeconds: 1,
      reuseServers: true,
    };
  }
  const seconds = envNumber('BENCH_DURATION', 4, { integer: false, min: 0.1 });
  return {
    quick,
    rounds: envNumber('BENCH_ROUNDS', 3),
    seconds,
    warmupSeconds: envNumber('BENCH_WARMUP', 1, { integer: false, min: 0 }),
    connections: envNumber('BENCH_CONNECTIONS', 32),
    sweep: [1, 8, 32, 128, 512],
    payloadBytes: [KIB, 64 * KIB, 1024 * KIB],
    payloadConnections: 8,
    cancelTasks: envNumber('BENCH_CANCEL_TASKS', 1000),
    cancelWarmup: envNumber('BENCH_CANCEL_WARMUP', 200, { min: 0 }),
    replicaTasks: envNumber('BENCH_REPLICA_TASKS', 2000),
    idleWsConnections: envNumber('BENCH_IDLE_WS', 10_000),
    profileSeconds: seconds,
    reuseServers: false,
  };
}
