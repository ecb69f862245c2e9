// PostgreSQL: commits of every process on the database (the CLI's writes, other instances), heard on one
// LISTEN connection per process. Every write transaction NOTIFYs its owner's id on CHANGE_CHANNEL as it
// locks the owner's feed head (changes.ts); PostgreSQL delivers the notification at commit, after
// the transaction's changes are visible, and never for one rolled back. The connection is the listener's own,
// outside the pool, since it stays open and silent. A lost connection is opened again (with a growing pause),
// and whatever committed meanwhile was not heard: every subscriber reads again once it listens. A connection
// lost without a word (a vanished host) is found by a query every HEARTBEAT_MS that must answer in time.
import { Socket } from 'node:net';
import type { Client } from 'pg';
import type { SignalSink, SignalSource, SourceEvent } from '../change-signals.ts';
import { CHANGE_CHANNEL } from './changes.ts';

/** How often the listening connection is asked whether it is alive, and how long its answer may take. */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_ANSWER_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;
/** Pauses before opening the connection again: doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 5000;

export class PostgresChangeListener implements SignalSource {
  private sink: SignalSink | undefined;
  private client: Client | undefined;
  private socket: Socket | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private stopped = false;

  private readonly url: string;
  private readonly report: (event: SourceEvent) => void;

  constructor(url: string, report: (event: SourceEvent) => void) {
    this.url = url;
    this.report = report;
  }

  start(sink: SignalSink): void {
    if (this.stopped || this.sink) return;
    this.sink = sink;
    void this.connect();
  }

  /** The connection stays open while no one subscribes: a subscriber that comes later is heard at once. */
  idle(): void {}

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.drop();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.attempt++;
    const { default: pg } = await import('pg');
    const socket = new Socket();
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'chessport change listener',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      stream: () => socket,
    });
    this.client = client;
    this.socket = socket;
    let lost = false;
    const lose = (reason: string) => {
      if (lost || this.client !== client) return;
      lost = true;
      this.drop();
      if (this.stopped) return;
      const retryInMs = Math.min(RETRY_LAST_MS, RETRY_FIRST_MS * 2 ** Math.max(0, this.attempt - 1));
      this.report({ kind: 'lost', reason, retryInMs });
      this.retry = setTimeout(() => void this.connect(), retryInMs);
      this.retry.unref();
    };
    client.on('error', (error) => lose(error.message));
    client.on('end', () => lose('the connection closed'));
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) this.sink?.committed(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANGE_CHANNEL}`);
    } catch (error) {
      lose(error instanceof Error ? error.message : String(error));
      return;
    }
    if (this.client !== client) return;
    this.report({ kind: 'listening', attempt: this.attempt });
    this.attempt = 0;
    this.heartbeat = setInterval(() => {
      const timer = setTimeout(() => lose('no answer to the heartbeat'), HEARTBEAT_ANSWER_MS);
      timer.unref();
      client.query('select 1').then(
        () => clearTimeout(timer),
        (error: Error) => {
          clearTimeout(timer);
          lose(error.message);
        },
      );
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    // Commits before LISTEN took effect were not heard: every subscriber reads again.
    this.sink?.missed();
  }

  /** Closes the connection, if any, at once: its socket is destroyed, not ended politely. */
  private drop(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.socket?.destroy();
    this.socket = undefined;
    this.client = undefined;
  }
}
