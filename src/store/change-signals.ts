// The change-signal bus: tells whoever waits in this process (a long-poll of GET /changes, a delivery worker)
// that a change of an owner may have committed, so that it reads the store again instead of polling it.
// A signal carries no data and may be spurious: a subscriber always reads the store to learn what changed.
//
// It hears of commits three ways: the write transactions of this process (StoreContext.write, after their
// commit), and commits of other processes from a source per dialect, started with the first subscription:
// PostgreSQL's LISTEN (one connection per process, postgres/change-listener.ts; each write transaction
// NOTIFYs at its commit) and, on SQLite, one poller per process of the store's change counter
// (sqlite/change-poller.ts). When a source starts or reconnects, commits may have gone unheard meanwhile:
// every subscriber is then signalled without an owner, and reads again.

/** Subscribe with this in place of an owner id to hear of every owner's changes. */
export const ANY_OWNER: unique symbol = Symbol('any owner');

/**
 * Called when a change may have committed: with the owner's id when it is known, without one when it is not
 * (changes of unknown owners, or commits that may have gone unheard). Called synchronously by the bus: it
 * should only note the signal, and do its reading later.
 */
export type ChangeCallback = (ownerId: string | undefined) => void;

/** Where a dialect's source reports to: what the bus offers it. */
export interface SignalSink {
  /** A change of this owner committed. */
  committed(ownerId: string): void;
  /**
   * Changes committed whose owners are among `owners` (or not subscribed to); subscribers to every owner
   * hear of it without an owner.
   */
  committedAmong(owners: Iterable<string>): void;
  /** Commits may have gone unheard (the source started or reconnected): every subscriber reads again. */
  missed(): void;
  /** The owners with subscribers now. */
  owners(): Iterable<string>;
  /** Whether anyone subscribes to every owner. */
  readonly anyListening: boolean;
}

/** What a source says of itself, for the server's log. */
export type SourceEvent =
  | { kind: 'listening'; attempt: number }
  | { kind: 'lost'; reason: string; retryInMs: number };

/** Commits of other processes, heard while started (a dialect's LISTEN connection or poller). */
export interface SignalSource {
  /** The first subscriber came (also again after idle()). */
  start(sink: SignalSink): void;
  /** The last subscriber left. */
  idle(): void;
  /** For good: the store closes. */
  stop(): Promise<void>;
}

export class ChangeSignals implements SignalSink {
  private readonly byOwner = new Map<string, Set<ChangeCallback>>();
  private readonly everyOwner = new Set<ChangeCallback>();
  private subscribers = 0;
  private closed = false;
  /** What the source says of itself; the server sets it to log it. */
  onSourceEvent: (event: SourceEvent) => void = () => undefined;

  private readonly source: SignalSource | undefined;

  constructor(source?: SignalSource) {
    this.source = source;
  }

  /**
   * Calls `callback` whenever a change of `owner` (or with ANY_OWNER, of any owner) may have committed, until
   * the function returned is called. Subscribe before reading the store: a change that commits after the read
   * is then signalled, one that committed before it is in what was read.
   */
  subscribe(owner: string | typeof ANY_OWNER, callback: ChangeCallback): () => void {
    let set: Set<ChangeCallback>;
    if (owner === ANY_OWNER) set = this.everyOwner;
    else {
      set = this.byOwner.get(owner) ?? new Set();
      this.byOwner.set(owner, set);
    }
    // The same function twice is two subscriptions: wrapped, each is its own entry.
    const entry: ChangeCallback = (ownerId) => callback(ownerId);
    set.add(entry);
    this.subscribers++;
    if (this.subscribers === 1 && !this.closed) this.source?.start(this);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      set.delete(entry);
      if (owner !== ANY_OWNER && set.size === 0) this.byOwner.delete(owner);
      this.subscribers--;
      if (this.subscribers === 0 && !this.closed) this.source?.idle();
    };
  }

  /** Subscriptions now (for tests and metrics). */
  get size(): number {
    return this.subscribers;
  }

  committed(ownerId: string): void {
    const callbacks = this.byOwner.get(ownerId);
    if (callbacks) call(callbacks, ownerId);
    call(this.everyOwner, ownerId);
  }

  committedAmong(owners: Iterable<string>): void {
    for (const ownerId of owners) {
      const callbacks = this.byOwner.get(ownerId);
      if (callbacks) call(callbacks, ownerId);
    }
    call(this.everyOwner, undefined);
  }

  missed(): void {
    for (const callbacks of [...this.byOwner.values()]) call(callbacks, undefined);
    call(this.everyOwner, undefined);
  }

  owners(): Iterable<string> {
    return this.byOwner.keys();
  }

  get anyListening(): boolean {
    return this.everyOwner.size > 0;
  }

  /** Stops the source; subscriptions stay, but hear only this process's own commits. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.source?.stop();
  }
}

/** Calls each callback once; one that unsubscribes (or subscribes another) meanwhile changes nothing here. */
function call(callbacks: Set<ChangeCallback>, ownerId: string | undefined): void {
  if (callbacks.size === 0) return;
  for (const callback of [...callbacks]) callback(ownerId);
}
