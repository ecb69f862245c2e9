// What every resource of the store (accounts.ts, games.ts, feed.ts, ...) works with, built once when the
// store opens and before them: the connection, the dialect's adapter, where the compiled reads run, the
// change-signal bus, and the write transactions.
import type { Kysely, Transaction } from 'kysely';
import type { DialectAdapter, OpenedStore } from './adapter.ts';
import type { Changes } from './change-allocation.ts';
import type { ChangeSignals } from './change-signals.ts';
import type { RunQuery } from './prepared.ts';
import { ReadRouting } from './read-routing.ts';
import type { DB } from './schema.ts';
import { signalling } from './webhook-signals.ts';

/** The store's connection, or a transaction on it. */
export type Executor = Kysely<DB> | Transaction<DB>;

export class StoreContext {
  /** The connection: what the writes, and the reads that are not compiled, run on. */
  readonly db: Kysely<DB>;
  /** What differs between SQLite and PostgreSQL (adapter.ts). */
  readonly adapter: DialectAdapter;
  /**
   * Where the compiled reads that must see the latest commit run (prepared.ts): the token look-up of every
   * request. Always the primary's connection, counted as the primary's reads.
   */
  readonly reader: RunQuery;
  /**
   * Where the API's other reads run (lists, details, exports, the feed): a healthy replica when the server
   * reads from replicas, else the primary; a read that needs a position its replica lacks runs on the
   * primary (read-routing.ts).
   */
  readonly reads: ReadRouting;
  /**
   * Signals that a change of an owner may have committed, from this process's writes and (once someone
   * subscribes) from other processes' (change-signals.ts): what a waiting long-poll wakes on.
   */
  readonly signals: ChangeSignals;

  constructor(opened: Pick<OpenedStore, 'db' | 'adapter' | 'reader' | 'signals'>) {
    this.db = opened.db;
    this.adapter = opened.adapter;
    this.reads = new ReadRouting({ name: 'primary', kind: 'primary', db: opened.db, run: opened.reader });
    this.reader = this.reads.countingPrimary(opened.reader);
    this.signals = opened.signals;
  }

  /**
   * Runs fn in a write transaction on one owner's data; fn takes its change sequence values and change
   * time from `changes` (docs/design.md 18). Every write to games goes through here, and each touches the
   * games of one owner only (a game never changes owner). Why a feed reader never misses a change
   * (docs/design.md 19): the reader pages through one owner's games by seq, a page ends at the highest seq it
   * shows, and the next page starts above it. That loses nothing if, for each owner, seq order is commit
   * order: every change of the owner still to commit gets a seq above every seq a reader can already
   * see. Then a statement, which sees the commits up to one point, sees all of the owner's seqs up to the
   * highest it sees, and a cursor never steps over a seq that commits later.
   *
   * SQLite: the transaction begins IMMEDIATE, so it holds the store's one write lock from its first
   * statement to its commit; write transactions of every process run and commit one at a time, and the
   * seqs come from the `sequences` row inside them: the store-wide seq order is the commit order.
   *
   * PostgreSQL: transactions run at once and nextval() is not transactional, so values can commit out of
   * order: T1 takes 5, T2 takes 6 and commits, a reader pages past 6, then T1 commits 5 behind the cursor.
   * So the first statement of every write transaction locks the owner's `feed_heads` row (insert or
   * update), and the row lock holds until commit or rollback. Writers of one owner queue there, and the
   * next one takes its first value only after the previous one has committed (and left the snapshot's
   * in-progress list: PostgreSQL ends a transaction's visibility before it releases its locks). Its
   * nextval() values are therefore above all of the previous one's (`change_seq` has CACHE 1, so values
   * rise in the order they are taken, across sessions). For one owner, seq order is commit order. Writers
   * of different owners never wait for each other: their seqs interleave and may commit out of order,
   * which no reader can see, because every feed query is scoped to one owner. The lock is taken before fn
   * reads anything, so the dedup and maxGames checks of an import also see every earlier write of the
   * owner (each statement at READ COMMITTED sees what committed before it started).
   *
   * A game's row carries only its latest seq: written again, it moves up to a new seq, so a client past
   * its old seq meets it again, in its latest state. The change time is taken under the same lock and
   * never goes backwards (per owner in `feed_heads`, store-wide in the `change_time` row on SQLite; a
   * clock step back or another instance's slower clock reuses the latest), so an owner's updatedAt rises
   * with seq and `since` can start the feed at "the first seq whose updated_at >= since".
   *
   * The adapter takes the seqs and the change time (sqlite/changes.ts, postgres/changes.ts). A transaction
   * that takes any also records its owner's webhook signal (webhook-signals.ts).
   */
  readonly write = async <T>(
    ownerId: string,
    fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>,
  ): Promise<T> => {
    const { adapter } = this;
    // The owner's webhook signal is recorded in the same transaction: a write that commits has its signal,
    // one that rolls back has none.
    const result = await adapter
      .transaction(this.db, (trx) => signalling(trx, ownerId, adapter.beginChanges(trx, ownerId), fn))
      .catch((error: unknown) => {
        throw adapter.writeFailure(error);
      });
    // After the commit, never before: a waiter woken now reads what was written. Other processes hear of
    // it from PostgreSQL's NOTIFY (sent as the changes begin, delivered at commit) or SQLite's poller.
    this.signals.committed(ownerId);
    return result;
  };

  /**
   * Runs fn in a write transaction that touches no game (OAuth grants and records, webhook deliveries); on
   * SQLite it holds the write lock from its first statement.
   */
  readonly transaction = <T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> =>
    this.adapter.transaction(this.db, fn);
}
