import { Client, type ClientConfig, type Notification } from 'pg';

export interface NotificationListenerOptions {
  /** How to connect (the pool's settings); `application_name` is set here. */
  config: ClientConfig;
  /** Names the connection in `pg_stat_activity`. */
  applicationName: string;
  channels: readonly string[];
  onNotification(channel: string, payload: string): void;
  /**
   * Called each time the connection is (re)established: whatever was announced while there was none
   * is lost, so whoever waits on notifications rereads.
   */
  onConnect(): void;
}

const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * One dedicated connection (not a pooled one: LISTEN belongs to a session, and a pooled client
 * would be handed to someone else) listening on a few channels, reconnected with a growing delay
 * whenever it drops.
 */
export class NotificationListener {
  #client: Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #failures = 0;
  #closed = false;

  constructor(private readonly options: NotificationListenerOptions) {}

  /** Resolves after the first attempt to connect; when it failed, attempts go on in the background. */
  async start(): Promise<void> {
    await this.#connect();
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Ends the connection and every retry. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new Client({ ...this.options.config, application_name: this.options.applicationName });
    let dropped = false;
    const drop = (): void => {
      if (dropped) return;
      dropped = true;
      if (this.#client === client) this.#client = undefined;
      client.end().catch(() => undefined);
      this.#scheduleRetry();
    };
    // A dropped connection emits 'error' and/or 'end'; without an 'error' listener it would crash the process.
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (message: Notification) => {
      if (this.#client === client) this.options.onNotification(message.channel, message.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`LISTEN ${channel}`);
    } catch {
      drop();
      return;
    }
    if (dropped) return;
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#failures = 0;
    this.options.onConnect();
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** this.#failures);
    this.#failures += 1;
    // Jitter, so replicas that lost the server together do not all come back in the same instant.
    this.#retry = setTimeout(
      () => {
        this.#retry = undefined;
        void this.#connect();
      },
      delay / 2 + Math.random() * (delay / 2),
    );
    this.#retry.unref();
  }
}
