// What the sync tests compare: the server's data read through plain HTTP, and the mirror read as its owner
// would, with SQL on the SQLite file and the PGN files on disk.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Database, GameDetail } from '../../packages/client/src/types.ts';
import { http } from './harness.ts';

/** The databases as the mirror holds them, without the server's gameCount: DataSet.counts has those. */
export interface DataSet {
  databases: Omit<Database, 'gameCount'>[];
  games: Map<string, GameDetail>;
  /** The server's gameCount of each database; the mirror's own count of its games. */
  counts: Map<string, number>;
}

async function getData<T>(
  base: string,
  path: string,
  token: string,
): Promise<{ data: T; link: string | null }> {
  const res = await http<{ data: T }>(base, path, { token });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return { data: res.json.data, link: res.headers.get('link') };
}

/** Every database and every game's detail, as the API gives them to this token. */
export async function serverData(base: string, token: string): Promise<DataSet> {
  const listed = (await getData<Database[]>(base, '/databases', token)).data;
  const databases = listed.map(({ gameCount: _, ...database }) => database);
  const counts = new Map(listed.map((database) => [database.id, database.gameCount]));
  const ids: string[] = [];
  let path: string | null = '/games?limit=200';
  while (path) {
    const page: { data: { id: string }[]; link: string | null } = await getData(base, path, token);
    ids.push(...page.data.map((game) => game.id));
    path = /<\/api\/v1([^>]+)>;\s*rel="next"/.exec(page.link ?? '')?.[1] ?? null;
  }
  const games = new Map<string, GameDetail>();
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      games.set(id, (await getData<GameDetail>(base, `/games/${id}`, token)).data);
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return { databases, games, counts };
}

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

/**
 * The mirror's content, read with SQL. This mapping of rows to GameDetail repeats Mirror.games() and
 * Mirror.databases() (packages/sync/src/mirror.ts) on purpose: an owner's program reads the file with SQL,
 * not through Mirror, so the check reads its columns itself; a fault shared by Mirror's writes and reads (two
 * columns swapped both ways, a field stored in the wrong shape) shows here and would not through Mirror's reads.
 */
export function mirrorData(out: string): DataSet {
  const db = new Sqlite(join(out, 'mirror.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const databases = (
      db
        .prepare(
          `select id, name, slug, private, max_games as maxGames, created_at as createdAt,
           updated_at as updatedAt from databases`,
        )
        .all() as (Omit<Database, 'private' | 'gameCount'> & { private: number })[]
    ).map((row) => ({ ...row, private: row.private === 1 }));
    const games = new Map<string, GameDetail>();
    for (const row of db.prepare('select * from games').all() as GameRow[]) {
      games.set(row.id, {
        id: row.id,
        slug: row.slug,
        databaseId: row.database_id,
        event: row.event,
        date: row.date,
        result: row.result,
        eco: row.eco,
        white: JSON.parse(row.white) as GameDetail['white'],
        black: JSON.parse(row.black) as GameDetail['black'],
        fen: row.fen,
        moves: row.moves,
        pgn: row.pgn,
        metadata: JSON.parse(row.metadata) as GameDetail['metadata'],
        updatedAt: row.updated_at,
      });
    }
    const counts = new Map(databases.map((database) => [database.id, 0]));
    for (const game of games.values()) counts.set(game.databaseId, (counts.get(game.databaseId) ?? 0) + 1);
    return { databases, games, counts };
  } finally {
    db.close();
  }
}

/** Whether the mirror in `out` holds the game `id` (false while it has no file). */
export function mirrorHolds(out: string, id: string): boolean {
  try {
    const db = new Sqlite(join(out, 'mirror.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('select 1 from games where id = ?').get(id) !== undefined;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/** How many games the mirror holds right now; 0 while it does not exist yet. */
export function mirroredCount(out: string): number {
  try {
    const db = new Sqlite(join(out, 'mirror.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('select count(*) from games').pluck().get() as number;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** The mirror's state table: cursor, base_url, reader. */
export function mirrorState(out: string): Record<string, string> {
  const db = new Sqlite(join(out, 'mirror.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('select key, value from state').all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((row) => [row.key, row.value]));
  } finally {
    db.close();
  }
}

/** Changes the mirror's state as another program could: an older sync's file, a damaged cursor. */
export function setMirrorState(out: string, key: string, value: string | null): void {
  const db = new Sqlite(join(out, 'mirror.sqlite'), { fileMustExist: true });
  try {
    if (value === null) db.prepare('delete from state where key = ?').run(key);
    else db.prepare('update state set value = ? where key = ?').run(value, key);
  } finally {
    db.close();
  }
}

const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);

/** Game for game: the same ids, and for each the same database, PGN and every other field. */
export function assertSameData(mirror: DataSet, server: DataSet, context: string): void {
  assert.deepEqual(
    [...mirror.databases].sort(byId),
    [...server.databases].sort(byId),
    `${context}: databases`,
  );
  assert.deepEqual([...mirror.games.keys()].sort(), [...server.games.keys()].sort(), `${context}: game ids`);
  assert.deepEqual(
    [...mirror.counts].sort(),
    [...server.counts].sort(),
    `${context}: each database's games, counted`,
  );
  for (const [id, game] of server.games) {
    const mirrored = mirror.games.get(id);
    assert.equal(mirrored?.databaseId, game.databaseId, `${context}: database of game ${id}`);
    assert.equal(mirrored?.pgn, game.pgn, `${context}: PGN of game ${id}`);
    assert.deepEqual(mirrored, game, `${context}: game ${id}`);
  }
}

/** The games of a PGN file: a blank line followed by a tag starts the next game. */
export const splitPgn = (text: string): string[] =>
  text
    .split(/\n\n(?=\[)/)
    .map((game) => game.trim())
    .filter(Boolean);

/** <out>/pgn holds one file per database, each with the games of the server's export, and nothing else. */
export async function assertPgnFiles(
  out: string,
  base: string,
  token: string,
  databases: DataSet['databases'],
) {
  const folder = join(out, 'pgn');
  assert.deepEqual(readdirSync(folder).sort(), databases.map((db) => `${db.slug}.pgn`).sort());
  for (const db of databases) {
    const res = await http(base, `/databases/${db.id}/games?format=pgn`, { token });
    assert.equal(res.status, 200);
    const mirrored = splitPgn(readFileSync(join(folder, `${db.slug}.pgn`), 'utf8'));
    assert.deepEqual(mirrored.sort(), splitPgn(res.text).sort(), `PGN file of ${db.slug}`);
  }
}
