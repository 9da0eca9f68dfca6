/**
 * Environment the reference server's process is started with unless the caller's environment sets
 * the same variable (`pnpm start`, the fuzz and bench harnesses). Read by whoever spawns the
 * process: the variables act when the process starts, so the server cannot set them for itself.
 *
 * `MALLOC_ARENA_MAX=2`: with glibc's default of up to 8 arenas per core, the native memory of
 * socket buffers and WebSocket frames freed after a burst of clients stays with the arenas, so the
 * process never gives it back (200 non-reading WebSocket clients left RSS at 1.4–2 × its start
 * after they were gone); with two arenas it returns to its start. Other C libraries ignore it.
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** `PROCESS_ENV` under `env`: a variable `env` sets wins. */
export function withProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...PROCESS_ENV, ...env };
}
