// The generator of bench/scale.ts: fills a store (either dialect) with N distinct games made from a sample of
// real ones, spread over users and databases the way owner-scoped queries meet them in production, through
// the Store API in batched transactions; and the marker that lets a later run reuse a complete fill.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { normalizeGame } from '../src/chess/index.ts';
import { toGameRecord } from '../src/import/index.ts';
import type { Database, GameRecord, Store, User } from '../src/store/index.ts';

/** How the games are spread: `users` users with `databasesPerUser` databases each, plus one large archive. */
export interface FillPlan {
  games: number;
  users: number;
  databasesPerUser: number;
  /** Share of all games in one database of the first user: the export is measured on it. */
  archiveShare: number;
}

export const DEFAULT_PLAN: Omit<FillPlan, 'games'> = { users: 100, databasesPerUser: 4, archiveShare: 0.1 };

/** What a fill leaves in the store, and what the marker records about it. */
export interface FillSummary {
  plan: FillPlan;
  /** Distinct real games the copies were made from. */
  distinct: number;
  fillSeconds: number;
  gamesPerSecond: number;
  /** When the fill finished (ISO time). */
  finishedAt: string;
}

export interface Layout {
  users: User[];
  archive: Database;
}

const LOGIN_PREFIX = 'bench-user-';
const ARCHIVE_NAME = 'Archive';
const MARKER_KEY = 'bench.scale.fill';
/** Games per insertGames transaction. */
export const FILL_BATCH = 1000;

const loginOf = (i: number) => `${LOGIN_PREFIX}${String(i + 1).padStart(3, '0')}`;

// ---- honest copies -------------------------------------------------------------------------------------

const escapeTag = (value: string) => value.replace(/[\\"]/g, '\\$&');
const ROUND_LINE = /^\[Round "(?:[^"\\]|\\.)*"\]$/m;

/**
 * Copy `copy` of a real game: the same game played in another round. Copy 0 is the game itself; copy k > 0
 * has Round "<round>.<k>" (or "<k>" when the round is unknown), and with it everything that depends on the
 * Round tag: the metadata, the export PGN (where Round always has its line, in the Seven Tag Roster) and the
 * content hash. So every copy is a distinct game, exactly what importing its PGN would store
 * (checkCopies proves it on a few).
 */
export function copyOf(record: GameRecord, copy: number): GameRecord {
  if (copy === 0) return record;
  const base = record.metadata.Round;
  const round = base && base !== '?' ? `${base}.${copy}` : String(copy);
  const pgn = record.pgn.replace(ROUND_LINE, `[Round "${escapeTag(round)}"]`);
  if (pgn === record.pgn) throw new Error(`no Round line in the export PGN of ${record.white.name}`);
  return {
    ...record,
    metadata: { ...record.metadata, Round: round },
    pgn,
    contentHash: createHash('sha256').update(pgn).digest('hex'),
  };
}

/** Imports a few copies' PGN the way `chessport import` does and fails unless the records are identical. */
export function checkCopies(records: GameRecord[]): void {
  for (const [index, copy] of [
    [0, 1],
    [1, 7],
    [records.length - 1, 499],
  ] as const) {
    const made = copyOf(records[index] as GameRecord, copy);
    const parsed = normalizeGame(made.pgn);
    if (!parsed.ok) throw new Error(`copy ${copy} of game ${index} does not import: ${parsed.reason}`);
    if (!isDeepStrictEqual(toGameRecord(parsed.game), made))
      throw new Error(`copy ${copy} of game ${index} differs from what an import would store`);
  }
}

/** The sample without games whose export PGN repeats (their copies would repeat too). */
export function distinctRecords(records: GameRecord[]): GameRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => !seen.has(r.contentHash) && seen.add(r.contentHash));
}

// ---- the fill ------------------------------------------------------------------------------------------

interface Task {
  database: Database;
  /** Global index of the first game: game i is copy floor(i / distinct) of sample game i % distinct. */
  first: number;
  count: number;
  /** Where the task falls within its database's share of the fill, 0..1: tasks run in that order. */
  position: number;
}

/** Games per database: the archive's share, the rest as evenly as possible. */
function sizes(plan: FillPlan): { archive: number; each: (i: number) => number; small: number } {
  const archive = Math.round(plan.games * plan.archiveShare);
  const small = plan.users * plan.databasesPerUser;
  const rest = plan.games - archive;
  return { archive, small, each: (i) => Math.floor(rest / small) + (i < rest % small ? 1 : 0) };
}

async function createLayout(store: Store, plan: FillPlan): Promise<{ layout: Layout; targets: Database[] }> {
  const users: User[] = [];
  const targets: Database[] = [];
  for (let u = 0; u < plan.users; u++) {
    const user = await store.accounts.addUser({ login: loginOf(u), name: `Bench User ${u + 1}` });
    users.push(user);
    for (let d = 0; d < plan.databasesPerUser; d++)
      targets.push(await store.databases.add({ ownerId: user.id, name: `Games ${d + 1}` }));
  }
  const first = users[0];
  if (!first) throw new Error('a fill needs at least one user');
  const archive = await store.databases.add({ ownerId: first.id, name: ARCHIVE_NAME });
  return { layout: { users, archive }, targets: [archive, ...targets] };
}

/**
 * Batches of every database, interleaved so that each database's games spread over the whole fill (as
 * imports of many users do over time) rather than lying in one block of the table.
 */
function tasksOf(plan: FillPlan, targets: Database[]): Task[] {
  const { archive, each } = sizes(plan);
  const tasks: Task[] = [];
  let next = 0;
  targets.forEach((database, i) => {
    const total = i === 0 ? archive : each(i - 1);
    const batches = Math.ceil(total / FILL_BATCH);
    for (let b = 0; b < batches; b++) {
      const count = Math.min(FILL_BATCH, total - b * FILL_BATCH);
      tasks.push({ database, first: next, count, position: (b + 0.5) / batches });
      next += count;
    }
  });
  return tasks.sort((a, b) => a.position - b.position);
}

/**
 * Fills an empty store following the plan, `workers` transactions at a time (different owners' writers do
 * not wait for each other), and records the marker last, so only a complete fill is ever reused.
 */
export async function fillStore(
  store: Store,
  plan: FillPlan,
  sample: GameRecord[],
  options: { workers?: number; progress?: (done: number, seconds: number) => void } = {},
): Promise<FillSummary> {
  const { targets } = await createLayout(store, plan);
  const tasks = tasksOf(plan, targets);
  const started = performance.now();
  let done = 0;
  let reported = 0;
  const worker = async () => {
    for (let task = tasks.shift(); task; task = tasks.shift()) {
      const games = Array.from({ length: task.count }, (_, k) => {
        const i = task.first + k;
        return copyOf(sample[i % sample.length] as GameRecord, Math.floor(i / sample.length));
      });
      // Every game is distinct by construction: skip the dedup lookup, as --allow-duplicates does.
      const outcome = await store.games.insert(task.database, games, true);
      if (outcome.inserted !== task.count) throw new Error(`inserted ${outcome.inserted} of ${task.count}`);
      done += task.count;
      if (options.progress && done - reported >= plan.games / 10) {
        reported = done;
        options.progress(done, (performance.now() - started) / 1000);
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers ?? 1 }, worker));
  const fillSeconds = (performance.now() - started) / 1000;
  const summary: FillSummary = {
    plan,
    distinct: sample.length,
    fillSeconds,
    gamesPerSecond: plan.games / fillSeconds,
    finishedAt: new Date().toISOString(),
  };
  await store.db
    .insertInto('settings')
    .values({ key: MARKER_KEY, value: JSON.stringify(summary) })
    .execute();
  return summary;
}

/** The marker of a complete fill, if the store holds one. */
export async function readMarker(store: Store): Promise<FillSummary | undefined> {
  const row = await store.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', MARKER_KEY)
    .executeTakeFirst();
  return row && (JSON.parse(row.value) as FillSummary);
}

/** The users and the archive of a filled store. */
export async function readLayout(store: Store): Promise<Layout> {
  const users = (await store.accounts.listUsers())
    .filter((u) => u.login.startsWith(LOGIN_PREFIX))
    .sort((a, b) => a.login.localeCompare(b.login));
  const first = users[0];
  const archive = first && (await store.databases.findByRef(first.id, ARCHIVE_NAME))[0];
  if (!archive) throw new Error('the filled store has no archive database');
  return { users, archive };
}
