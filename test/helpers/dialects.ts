// The store suites run once per dialect: a temp SQLite file, and a fresh PostgreSQL database when
// TEST_POSTGRES_URL is set (skipped, saying so, when it is not).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import { openStore, type Store } from '../../src/store/index.ts';
import type { GameRecord, User } from '../../src/store/types.ts';
import {
  createTestDatabase,
  dropTestDatabase,
  POSTGRES_SKIP,
  TEST_POSTGRES_URL,
  type TestDialect,
} from './stores.ts';

export interface DialectCase {
  dialect: TestDialect;
  /** false, or why this dialect's suite is skipped. */
  skip: string | false;
}

export const DIALECTS: DialectCase[] = [
  { dialect: 'sqlite', skip: false },
  { dialect: 'postgres', skip: TEST_POSTGRES_URL ? false : POSTGRES_SKIP },
];

export interface TestStore {
  store: Store;
  url: string;
  /** Opens another store on the same data (another process, as far as the store can tell). */
  reopen(): Promise<Store>;
  close(): Promise<void>;
}

export async function openTestStore(dialect: TestDialect): Promise<TestStore> {
  let url: string;
  let remove: () => Promise<void>;
  if (dialect === 'postgres') {
    url = await createTestDatabase();
    remove = () => dropTestDatabase(url);
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'chessport-store-'));
    url = join(dir, 'store.sqlite');
    remove = async () => rmSync(dir, { recursive: true, force: true });
  }
  const store = await openStore(url);
  const others: Store[] = [];
  return {
    store,
    url,
    reopen: async () => {
      const other = await openStore(url);
      others.push(other);
      return other;
    },
    close: async () => {
      for (const other of others) await other.close();
      await store.close();
      await remove();
    },
  };
}

/** A game record as the import layer makes them; `n` makes it distinct. */
export function record(n: number, overrides: Partial<GameRecord> = {}): GameRecord {
  return {
    event: `Event ${n}`,
    date: '2024-05-06',
    year: '2024',
    result: '1-0',
    eco: 'C60',
    white: { name: `White ${n}`, elo: 2000 + n, fideId: null, country: 'NOR' },
    black: { name: `Black ${n}`, elo: null, fideId: '1503014', country: null },
    metadata: { Site: 'Oslo', Round: String(n) },
    moves: 'e2e4 e7e5',
    fen: 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2',
    pgn: `[Event "Event ${n}"]\n\n1. e4 e5 1-0\n`,
    contentHash: `hash-${n}`,
    ...overrides,
  };
}

/**
 * A fresh SQLite store with the user alice for each test of the file (registers beforeEach and afterEach):
 * for suites whose tests look at the store's files or rows as a whole.
 */
export function sqliteStorePerTest(): { t: TestStore; alice: User } {
  const fresh = {} as { t: TestStore; alice: User };
  beforeEach(async () => {
    fresh.t = await openTestStore('sqlite');
    fresh.alice = await fresh.t.store.accounts.addUser({ login: 'alice' });
  });
  afterEach(async () => {
    await fresh.t?.close();
  });
  return fresh;
}
