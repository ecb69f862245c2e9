// Long-polls of GET /changes?wait=<seconds> (docs/api.md, "Waiting for changes"): a request whose page
// would be empty is held until a change of its user commits, its wait ends, its client leaves or the
// server shuts down. A waiting request holds no store connection: it sleeps on the store's change signals
// (src/store/change-signals.ts) and reads again when one comes. Its connection's idle timeout is set aside
// while it waits, which the wait's own end bounds.
import type { FastifyReply } from 'fastify';
import type { ChangeSignals } from '../store/index.ts';
import { feedMetrics } from './metrics.ts';

/** Why a wait ended: a change came, the wait ran out, shutdown, the client left, or a read failed. */
export type WaitOutcome = 'change' | 'timeout' | 'shutdown' | 'disconnect' | 'error';

export class FeedWaits {
  private readonly signals: ChangeSignals;
  /** Wakes each waiting request, to end its wait (shutdown). */
  private readonly waiting = new Set<() => void>();
  private closing = false;

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
   * read. During shutdown it reads once and does not wait.
   */
  async hold<T>(
    ownerId: string,
    waitMs: number,
    reply: FastifyReply,
    read: () => Promise<T>,
    found: (result: T) => boolean,
  ): Promise<T> {
    if (this.closing) return read();
    let signalled = false;
    let wake: (() => void) | undefined;
    const unsubscribe = this.signals.subscribe(ownerId, () => {
      signalled = true;
      wake?.();
    });
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
      let result = await read();
      if (found(result)) return result;
      // From here the request waits: counted, and freed at once when its client leaves.
      counted = true;
      feedMetrics.waiting.inc();
      this.waiting.add(shutdown);
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
        result = await read();
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
}
