/**
 * A connection that LISTENs on one Postgres channel and calls back on each notification, opening the
 * connection again (with backoff and jitter) whenever it fails. `onNotify` is also called with no
 * payload each time the connection is (re)established: whatever was announced while not listening;
 * `onLost` each time a listening connection ends.
 */
import pg from 'pg';
import type { Logger } from '../shared/log.ts';

/** The longest wait before the listening connection is opened again after it failed. */
const MAX_RELISTEN_MS = 10_000;

export class Listener {
  private stopping = false;
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    /** The connection's `application_name` (shown in pg_stat_activity). */
    private readonly name: string,
    private readonly log: Logger,
    private readonly onNotify: (payload: string | undefined) => void,
    private readonly onLost?: () => void,
  ) {}

  start(): void {
    this.running ??= this.listen();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.client?.end().catch(() => undefined);
    await this.running;
  }

  private async listen(): Promise<void> {
    for (let failures = 0; !this.stopping; ) {
      const client = new pg.Client({ connectionString: this.url, application_name: this.name });
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        client.on('notification', (n) => this.onNotify(n.payload));
        await client.query(`LISTEN ${this.channel}`);
        // A stop from here on ends this client; a stop that came while connecting is seen here.
        this.client = client;
        if (!this.stopping) {
          failures = 0;
          this.onNotify(undefined);
          await lost;
          this.onLost?.();
        }
      } catch (err) {
        if (!this.stopping) this.log.warn({ err, channel: this.channel }, 'could not listen for notifications; polling meanwhile');
      }
      this.client = undefined;
      await client.end().catch(() => undefined);
      if (this.stopping) return;
      failures++;
      await new Promise((r) => setTimeout(r, Math.min(MAX_RELISTEN_MS, 250 * 2 ** failures) * (0.5 + Math.random())));
    }
  }
}
