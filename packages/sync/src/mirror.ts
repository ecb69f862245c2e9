// The sync's local store: a SQLite file the consumer owns, holding the databases, the games with their PGN
// and the feed cursor. A page's games and the cursor after it are written in one transaction, so the
// cursor never runs ahead of the data: a crash at any point repeats at most one page on the next run.
import type { Database, GameDetail, Player } from '@chessport/client';
import Sqlite from 'better-sqlite3';
import { createPrivately } from './private-files.ts';

const SCHEMA_VERSION = 1;

const SCHEMA = `
  create table if not exists databases (
    id text primary key,
    name text not null,
    slug text not null,
    private integer not null,
    max_games integer,
    created_at text not null,
    updated_at text not null
  );
  -- white, black: player JSON {name, elo, fideId, country}; metadata: JSON object of tag pairs.
  create table if not exists games (
    id text primary key,
    database_id text not null,
    slug text not null,
    event text,
    date text,
    result text not null,
    eco text,
    white text not null,
    black text not null,
    fen text not null,
    moves text not null,
    pgn text not null,
    metadata text not null,
    updated_at text not null
  );
  create table if not exists state (key text primary key, value text not null);
`;

/** Dropped while a take-over writes its games, and built again at its end (Mirror.finishTakeOver). */
const INDEX_BY_DATABASE = 'create index if not exists games_by_database on games (database_id)';

/** Whose mirror it is, recorded in its state: owner.ts checks a run against it before anything is written. */
export interface Owner {
  /** The API base the mirror follows, like https://chess.example.org/api/v1. */
  baseUrl: string;
  /** The /me id of the mirror's tokens. */
  reader: string;
}

export interface PageWrite {
  upserts: GameDetail[];
  deletes: string[];
  /** The feed cursor after the page, stored with it; none for a batch of a take-over's export. */
  cursor: string | undefined;
}

/** A game as the mirror holds it: the API's game detail. */
export type MirroredGame = GameDetail;

/**
 * A database as the mirror holds it: the API's, without gameCount, which the server counts and the mirror's
 * games give (`select count(*) from games where database_id = ?`).
 */
export type MirroredDatabase = Omit<Database, 'gameCount'>;

interface GameRow {
  id: string;
  database_id: string;
  slug: string;
  event: string | null;
  date: string | null;
  result: GameDetail['result'];
  eco: string | null;
  white: string;
  black: string;
  fen: string;
  moves: string;
  pgn: string;
  metadata: string;
  updated_at: string;
}

/** A game's values in the order of the games table's columns, players and tags as JSON. */
function gameValues(game: GameDetail): unknown[] {
  return [
    game.id,
    game.databaseId,
    game.slug,
    game.event,
    game.date,
    game.result,
    game.eco,
    JSON.stringify(game.white),
    JSON.stringify(game.black),
    game.fen,
    game.moves,
    game.pgn,
    JSON.stringify(game.metadata),
    game.updatedAt,
  ];
}

/**
 * The inserts of a take-over's export, on a connection of their own to the mirror file (the take-over's
 * writer thread's: takeover-worker.ts), while the Mirror's connection, which began the take-over, waits to
 * finish it. Plain inserts into a table that holds none of the games (the export has each game once; a game
 * already there is replaced); commits need not reach the disk (Mirror.beginTakeOver).
 */
export class TakeOverInserts {
  readonly #db: Sqlite.Database;
  readonly #insert: Sqlite.Statement;

  constructor(file: string) {
    this.#db = new Sqlite(file);
    this.#db.pragma('busy_timeout = 10000');
    // Per connection: this one's commits, like the Mirror's during the take-over, need not wait for the disk.
    this.#db.pragma('synchronous = NORMAL');
    // The Mirror's connection checkpoints the WAL meanwhile (Mirror.checkpoint), on the run's thread, which
    // the download leaves mostly idle: this thread only appends to the WAL.
    this.#db.pragma('wal_autocheckpoint = 0');
    this.#insert = this.#db.prepare(
      `insert or replace into games (id, database_id, slug, event, date, result, eco, white, black, fen, moves,
         pgn, metadata, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /** Games of the export, in one transaction. */
  insert(games: Iterable<GameDetail>): void {
    this.#db.transaction(() => {
      for (const game of games) this.#insert.run(...gameValues(game));
    })();
  }

  close(): void {
    this.#db.close();
  }
}

export class Mirror {
  readonly file: string;
  readonly #db: Sqlite.Database;
  #prepared: { upsertGame: Sqlite.Statement; deleteGame: Sqlite.Statement } | undefined;

  constructor(file: string) {
    this.file = file;
    // SQLite gives the -wal and -shm files the mode of the database file.
    createPrivately(file);
    this.#db = new Sqlite(file);
    // A game with its PGN is a row of a few KB: 16 KB pages hold several each and spill fewer to overflow
    // pages than the default 4 KB, so writing a page of games costs less. A new file only: one that exists
    // keeps its page size.
    this.#db.pragma('page_size = 16384');
    // WAL: a reader (the consumer's app) never blocks the sync. synchronous = FULL: a committed page
    // survives a power cut too, not only a crash of this process; one fsync per page is cheap.
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 10000');
    const version = this.#db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      this.#db.close();
      throw new Error(`${file} was written by a newer chessport sync (schema ${version})`);
    }
    this.#db.exec(SCHEMA);
    this.#db.exec(INDEX_BY_DATABASE);
    this.#db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }

  close(): void {
    this.#db.close();
  }

  getState(key: string): string | undefined {
    const row = this.#db.prepare('select value from state where key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setState(key: string, value: string): void {
    this.#db
      .prepare(
        'insert into state (key, value) values (?, ?) on conflict (key) do update set value = excluded.value',
      )
      .run(key, value);
  }

  databaseIds(): Set<string> {
    const rows = this.#db.prepare('select id from databases').pluck().all() as string[];
    return new Set(rows);
  }

  /** Replaces the databases with the server's list; with `prune`, those no longer listed are removed. */
  putDatabases(databases: MirroredDatabase[], prune: boolean): void {
    const upsert = this.#db.prepare(
      `insert into databases (id, name, slug, private, max_games, created_at, updated_at)
       values (@id, @name, @slug, @private, @maxGames, @createdAt, @updatedAt)
       on conflict (id) do update set name = excluded.name, slug = excluded.slug, private = excluded.private,
         max_games = excluded.max_games, created_at = excluded.created_at, updated_at = excluded.updated_at`,
    );
    const remove = this.#db.prepare('delete from databases where id = ?');
    this.#db.transaction(() => {
      for (const db of databases) {
        const { id, name, slug, maxGames, createdAt, updatedAt } = db;
        upsert.run({ id, name, slug, private: db.private ? 1 : 0, maxGames, createdAt, updatedAt });
      }
      if (!prune) return;
      const listed = new Set(databases.map((db) => db.id));
      for (const id of this.databaseIds()) if (!listed.has(id)) remove.run(id);
    })();
  }

  /** One feed page: its games and deletions, and the cursor after it, all or nothing. */
  applyPage(page: PageWrite): void {
    const { upsertGame, deleteGame } = this.#statements();
    this.#db.transaction(() => {
      for (const game of page.upserts) upsertGame.run(...gameValues(game));
      for (const id of page.deletes) deleteGame.run(id);
      if (page.cursor !== undefined) this.setState('cursor', page.cursor);
    })();
  }

  /**
   * A take-over from an export begins: the mirror, which has no cursor, holds no game to keep (what an
   * interrupted take-over wrote may have been deleted on the server since), so its games go. Until
   * finishTakeOver(), commits need not reach the disk (synchronous = NORMAL: a crash may lose the last of
   * them, and a mirror without a cursor starts its take-over again anyway). The export's games are written
   * meanwhile by TakeOverInserts, on a connection of their own.
   */
  beginTakeOver(): void {
    if (this.getState('cursor') !== undefined) throw new Error('the mirror has a cursor: it is taken over');
    // The index by database is built once at the end, from the sorted rows, instead of row by row.
    this.#db.exec('drop index if exists games_by_database; delete from games');
    this.#db.pragma('synchronous = NORMAL');
  }

  /**
   * Copies what the WAL holds into the database file, as far as no reader needs it (PASSIVE: it never waits
   * for the writer nor makes it wait). During a take-over, whose writes do not checkpoint (TakeOverInserts).
   */
  checkpoint(): void {
    this.#db.pragma('wal_checkpoint(PASSIVE)');
  }

  /**
   * The take-over's last transaction: the index by database, and the cursor, the feed position after the
   * export's snapshot. Committed with synchronous = FULL, which makes every batch before it durable with it.
   */
  finishTakeOver(cursor: string): void {
    this.#db.pragma('synchronous = FULL');
    this.#db.transaction(() => {
      this.#db.exec(INDEX_BY_DATABASE);
      this.setState('cursor', cursor);
    })();
  }

  /** The page's statements, prepared once per mirror: a sync writes hundreds of pages. */
  #statements() {
    this.#prepared ??= {
      upsertGame: this.#db.prepare(
        `insert into games (id, database_id, slug, event, date, result, eco, white, black, fen, moves, pgn,
           metadata, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (id) do update set database_id = excluded.database_id, slug = excluded.slug,
           event = excluded.event, date = excluded.date, result = excluded.result, eco = excluded.eco,
           white = excluded.white, black = excluded.black, fen = excluded.fen, moves = excluded.moves,
           pgn = excluded.pgn, metadata = excluded.metadata, updated_at = excluded.updated_at`,
      ),
      deleteGame: this.#db.prepare('delete from games where id = ?'),
    };
    return this.#prepared;
  }

  /**
   * Records whose mirror this is. A mirror nobody owned yet that has no cursor has mirrored no page: the
   * database list it may hold (from a run that stopped before its first page) is dropped with it.
   */
  claim(owner: Owner): void {
    this.#db.transaction(() => {
      const unowned = this.getState('reader') === undefined && this.getState('cursor') === undefined;
      if (unowned) this.#db.exec('delete from games; delete from databases');
      this.#setOwner(owner);
    })();
  }

  /** Empties the mirror and forgets the cursor, and names the server and reader it now follows: one transaction. */
  startOver(owner: Owner): void {
    this.#db.transaction(() => {
      this.#db.exec("delete from games; delete from databases; delete from state where key = 'cursor'");
      this.#setOwner(owner);
    })();
  }

  #setOwner({ baseUrl, reader }: Owner): void {
    this.setState('base_url', baseUrl);
    this.setState('reader', reader);
  }

  counts(): { games: number; databases: number } {
    const games = this.#db.prepare('select count(*) from games').pluck().get() as number;
    const databases = this.#db.prepare('select count(*) from databases').pluck().get() as number;
    return { games, databases };
  }

  databases(): MirroredDatabase[] {
    const rows = this.#db
      .prepare(
        `select id, name, slug, private, max_games as maxGames, created_at as createdAt, updated_at as updatedAt
         from databases order by created_at, id`,
      )
      .all() as (Omit<MirroredDatabase, 'private'> & { private: number })[];
    return rows.map((row) => ({ ...row, private: row.private === 1 }));
  }

  /** A database's PGN texts, in the order the mirror first received the games; read lazily. */
  *databasePgn(databaseId: string): Generator<string> {
    const statement = this.#db.prepare('select pgn from games where database_id = ? order by rowid').pluck();
    yield* statement.iterate(databaseId) as IterableIterator<string>;
  }

  /** Every mirrored game, for consumers and tests. */
  games(): MirroredGame[] {
    const rows = this.#db.prepare('select * from games order by rowid').all() as GameRow[];
    return rows.map((row) => ({
      id: row.id,
      slug: row.slug,
      databaseId: row.database_id,
      event: row.event,
      date: row.date,
      result: row.result,
      eco: row.eco,
      white: JSON.parse(row.white) as Player,
      black: JSON.parse(row.black) as Player,
      fen: row.fen,
      moves: row.moves,
      pgn: row.pgn,
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      updatedAt: row.updated_at,
    }));
  }
}
