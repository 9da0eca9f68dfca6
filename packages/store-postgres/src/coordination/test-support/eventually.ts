/**
 * Polls `probe` until it returns something other than `undefined`/`false` and resolves with it;
 * rejects naming `what` (and the probe's last error) once `capMs` passed. The cap is generous: it
 * only bounds a test that would otherwise hang, and asserts nothing about speed.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  capMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + capMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Gave up after ${capMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
