/**
 * Runs `work` every `everyMs` ms, one run at a time (the next waits for the previous one to end,
 * so a slow database never piles runs up). Its timer never keeps the process alive.
 */
export class Repeater {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly everyMs: number,
    private readonly work: () => Promise<void>,
  ) {}

  start(): void {
    this.#schedule();
  }

  /** No more runs; resolves once the one in progress (if any) has ended. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => this.#run(), this.everyMs);
    this.#timer.unref();
  }

  #run(): void {
    // `work` reports its own failures; the catch only keeps a bug from becoming an unhandled rejection.
    this.#running = this.work()
      .catch(() => undefined)
      .finally(() => {
        this.#running = undefined;
        this.#schedule();
      });
  }
}
