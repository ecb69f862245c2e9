// Long-polls of GET /changes?wait=<seconds> (docs/api.md, "Waiting for changes"): a request whose page
// would be empty is held until a change of its user commits, its wait ends, its client leaves or the
// server shuts down. A waiting request holds no store connection: it sleeps on the store's change signals
// (src/store/change-signals.ts) and reads again when one comes. Its connection's idle timeout is set aside
// while it waits, which the wait's own end bounds.
//
// Requests that wait for the same page (one user's devices, or many requests of one client) and are woken
// by the same signal share one read: a read joins another that is under way only if that one began after
// the signal (or the subscription) that the joiner needs it to see, so none of them can miss a change.
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { feedMetrics } from '../platform/metrics.ts';
import type { ChangeSignals } from '../store/index.ts';

/** Why a wait ended: a change came, the wait ran out, shutdown, the client left, or a read failed. */
export type WaitOutcome = 'change' | 'timeout' | 'shutdown' | 'disconnect' | 'error';

/** The answers of the requests waiting now: a client that leaves one has not cut an answer short. */
const waitingAnswers = new WeakSet<ServerResponse>();

/** Whether this answer is of a request that waits for a change now (src/server/plugins/logging.ts). */
export function isWaiting(response: ServerResponse): boolean {
  return waitingAnswers.has(response);
}

export class FeedWaits {
  private readonly signals: ChangeSignals;
  /** Wakes each waiting request, to end its wait (shutdown). */
  private readonly waiting = new Set<() => void>();
  private closing = false;
  /** Counts subscriptions and signals: a read under way sees every one counted before it began. */
  private epoch = 0;
  /** The reads under way, by what they read, with the epoch at which each began. */
  private readonly reads = new Map<string, { began: number; result: Promise<unknown> }>();

  constructor(signals: ChangeSignals) {
    this.signals = signals;
  }

  /** Requests waiting now. */
  get size(): number {
    return this.waiting.size;
  }

  /**
   * read(), and while found() says its result is empty, again each time a change of the owner may have
   * committed, for up to waitMs: the first result found, or the last one read when the wait ends. A change
   * that commits between a read and the next wait is not missed: the subscription comes before the first
   * read. `key` names everything read() depends on (the owner, the position, the page's size...): requests
   * with the same key may share a read. During shutdown it reads once and does not wait.
   */
  async hold<T>(
    ownerId: string,
    key: string,
    waitMs: number,
    reply: FastifyReply,
    read: () => Promise<T>,
    found: (result: T) => boolean,
  ): Promise<T> {
    if (this.closing) return read();
    let signalled = false;
    let wake: (() => void) | undefined;
    /** The epoch a read must have begun at (or after) to see what this request has been told of. */
    let needs = 0;
    const unsubscribe = this.signals.subscribe(ownerId, () => {
      signalled = true;
      needs = ++this.epoch;
      wake?.();
    });
    needs = ++this.epoch;
    let outcome: WaitOutcome | undefined;
    const end = (why: WaitOutcome) => {
      outcome ??= why;
      wake?.();
    };
    const response = reply.raw;
    const left = () => {
      if (!response.writableFinished) end('disconnect');
    };
    const shutdown = () => end('shutdown');
    const socket = response.socket;
    const idleTimeout = socket?.timeout;
    let timer: NodeJS.Timeout | undefined;
    let counted = false;
    try {
      let result = await this.shared(key, needs, read);
      if (found(result)) return result;
      // From here the request waits: counted, and freed at once when its client leaves.
      counted = true;
      feedMetrics.waiting.inc();
      this.waiting.add(shutdown);
      waitingAnswers.add(response);
      response.once('close', left);
      if (response.destroyed) end('disconnect');
      if (this.closing) end('shutdown');
      socket?.setTimeout(0);
      timer = setTimeout(() => end('timeout'), waitMs);
      for (;;) {
        if (!signalled && outcome === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
        if (outcome !== undefined) return result;
        signalled = false;
        result = await this.shared(key, needs, read);
        if (found(result)) {
          outcome = 'change';
          return result;
        }
      }
    } finally {
      unsubscribe();
      clearTimeout(timer);
      if (counted) {
        this.waiting.delete(shutdown);
        waitingAnswers.delete(response);
        response.off('close', left);
        feedMetrics.waiting.dec();
        feedMetrics.waits.inc({ outcome: outcome ?? 'error' });
        if (socket && !socket.destroyed && idleTimeout !== undefined) socket.setTimeout(idleTimeout);
      }
    }
  }

  /** Shutdown: every waiting request is answered now with what it last read, and no new one waits. */
  endAll(): void {
    this.closing = true;
    for (const end of [...this.waiting]) end();
  }

  /** The read under way for key if it began at epoch `needs` or later, else a new one. */
  private shared<T>(key: string, needs: number, read: () => Promise<T>): Promise<T> {
    const current = this.reads.get(key);
    if (current && current.began >= needs) return current.result as Promise<T>;
    const entry = { began: this.epoch, result: read() as Promise<unknown> };
    this.reads.set(key, entry);
    const done = () => {
      if (this.reads.get(key) === entry) this.reads.delete(key);
    };
    entry.result.then(done, done);
    return entry.result as Promise<T>;
  }
}
