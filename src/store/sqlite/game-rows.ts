// SQLite: the INSERTs of an import batch, binding as few values as they can. better-sqlite3 binds each value
// through a native call, NULLs too, and for a row of 25 values that costs as much as SQLite's own work with
// every index. So a statement binds only what differs from row to row:
// - many rows per statement (one call, not one per row; see SIZES);
// - the owner, database and change time once per statement, and the first seq: each row's is that plus its
//   position (a batch's seqs are consecutive);
// - no dedup key: SQLite keeps its keys in the game_keys log (game-keys.ts), the column stays empty;
// - of the optional columns, only those with a value in the statement's rows: the others are NULL in its
//   text (opening books and engine lines have no event, date or players; most games lack FIDE ids); and
//   the metadata only when the rows have tags beyond their own fields: else it is '{}' in the text.
// Rows keep their order: each statement takes a run of consecutive rows of the same shape (the columns
// bound).
import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import { CONTENT_COLUMNS, pushContentValues } from '../game-columns.ts';
import type { GameRecord } from '../types.ts';
import { perConnection } from './handle.ts';

/**
 * Rows per statement: a run is written in statements of these sizes, largest first: a statement of many rows
 * takes long to prepare and much memory to keep, so few sizes are made. (Statements are INSERT OR FAIL, and
 * the games table's foreign keys deferred, so that SQLite keeps no statement journal for them: see migration
 * 0004.)
 */
const SIZES = [1024, 128, 16, 4, 1] as const;
/** Statements are kept for at most so many shapes (sets of columns bound); rarer shapes bind them all. */
const MAX_SHAPES = 16;

/** The columns in which every game has a value of its own: always bound. */
const OWN = new Set<string>(['slug', 'result', 'moves', 'fen', 'pgn', 'content_hash']);
/**
 * Positions in CONTENT_COLUMNS of the other columns, and their usual values: NULL for the optional ones, and
 * no tags beyond the game's own fields for metadata. A statement has the usual value in its text where its
 * rows have it; a row's shape has bit i set when it has another value in the column INLINED[i].
 */
const INLINED = CONTENT_COLUMNS.flatMap((column, i) => (OWN.has(column) ? [] : [i]));
const USUAL_VALUES = INLINED.map((i) => (CONTENT_COLUMNS[i] === 'metadata' ? '{}' : null));
/** The shape with every column bound. */
const ALL = (1 << INLINED.length) - 1;

export interface RowBatch {
  games: GameRecord[];
  ids: string[];
  /** The first game's seq; the others follow one by one. */
  firstSeq: number;
  ownerId: string;
  databaseId: string;
  now: number;
}

/** Per connection: the statements made so far, and per shape the positions of the content values it binds. */
interface Prepared {
  statements: Map<string, Statement<unknown[]>>;
  shapes: Map<number, number[]>;
}
const preparedOf = perConnection((): Prepared => ({ statements: new Map(), shapes: new Map() }));

/** Whether the content value at position i is bound in statements of this shape (else its usual value is in the text). */
function binds(shape: number, i: number): boolean {
  const bit = INLINED.indexOf(i);
  return bit === -1 || (shape & (1 << bit)) !== 0;
}

function insertSql(shape: number, rows: number): string {
  const values = CONTENT_COLUMNS.map((_, i) => {
    if (binds(shape, i)) return '?';
    const usual = USUAL_VALUES[INLINED.indexOf(i)];
    return usual === null ? 'null' : `'${usual}'`; // our own constants: no quote inside
  }).join(', ');
  const tuples = Array.from(
    { length: rows },
    (_, k) => `(?, '', $seq + ${k}, ${values}, $owner, $database, $now, $now, 0)`,
  );
  const columns = ['id', 'dedup_key', 'seq', ...CONTENT_COLUMNS, 'owner_id', 'database_id', 'created_at'];
  return `insert or fail into games (${columns.join(', ')}, updated_at, deleted) values ${tuples.join(', ')}`;
}

function statementFor(prepared: Prepared, handle: SqliteHandle, shape: number, rows: number) {
  const key = `${shape}:${rows}`;
  let statement = prepared.statements.get(key);
  if (!statement) {
    statement = handle.prepare<unknown[]>(insertSql(shape, rows));
    prepared.statements.set(key, statement);
  }
  return statement;
}

/** The row's shape (see INLINED); ALL once there are many shapes. */
function shapeOf(prepared: Prepared, values: unknown[]): number {
  let shape = 0;
  for (let bit = 0; bit < INLINED.length; bit++) {
    if (values[INLINED[bit] as number] !== USUAL_VALUES[bit]) shape |= 1 << bit;
  }
  if (prepared.shapes.has(shape)) return shape;
  if (prepared.shapes.size >= MAX_SHAPES) shape = ALL;
  if (!prepared.shapes.has(shape)) {
    prepared.shapes.set(
      shape,
      CONTENT_COLUMNS.flatMap((_, i) => (binds(shape, i) ? [i] : [])),
    );
  }
  return shape;
}

/**
 * Appends a row's bound values to the run: its id, then its content values at `positions`. A function of its
 * own so that collectRun's loop has no inner loop: V8 compiles such a loop on its own (on-stack replacement)
 * and leaves the compiled code at its end, once per game.
 */
function pushBound(run: unknown[], id: string, values: unknown[], positions: number[]): void {
  run.push(id);
  for (const position of positions) run.push(values[position]);
}

/** Consecutive rows of a batch with the same shape, to be written together. */
interface Run {
  /** The rows' bound values, one row after the other: `width` values a row. */
  values: unknown[];
  rows: number;
  width: number;
  shape: number;
  /** The batch's row the run starts at. */
  start: number;
}

/**
 * Writes the run's rows in statements of SIZES; returns the last row's pk. A function of the module rather
 * than a closure made per batch: V8 ties the optimised insertGameRows to the closure it sees, and drops it
 * for the next batch's.
 */
function writeRun(prepared: Prepared, handle: SqliteHandle, batch: RowBatch, run: Run): number {
  const { values, rows, width, shape, start } = run;
  let lastPk = 0;
  let at = 0;
  for (const size of SIZES) {
    for (; rows - at >= size; at += size) {
      const params = size === rows ? values : values.slice(at * width, (at + size) * width);
      const info = statementFor(prepared, handle, shape, size).run(params, {
        seq: batch.firstSeq + start + at,
        owner: batch.ownerId,
        database: batch.databaseId,
        now: batch.now,
      });
      lastPk = Number(info.lastInsertRowid);
    }
  }
  return lastPk;
}

/**
 * The run that starts at row `start`: that row and the rows after it of its shape, at most SIZES[0] in all.
 * `values` is scratch for one row's content values. The loop ends where a run does, in a function of its own:
 * as one loop over the whole batch, V8 compiles it on its own (on-stack replacement) before any run is
 * written, and leaves that code at each run's end, compiling insertGameRows anew in between.
 */
function collectRun(prepared: Prepared, batch: RowBatch, start: number, values: unknown[]): Run {
  const { ids, games } = batch;
  values.length = 0;
  pushContentValues(values, games[start] as GameRecord, ids[start] as string);
  const shape = shapeOf(prepared, values);
  const positions = prepared.shapes.get(shape) as number[];
  const run: Run = { values: [], rows: 0, width: 1 + positions.length, shape, start };
  for (;;) {
    const i = start + run.rows;
    pushBound(run.values, ids[i] as string, values, positions);
    run.rows++;
    if (i + 1 === games.length || run.rows === SIZES[0]) return run;
    values.length = 0;
    pushContentValues(values, games[i + 1] as GameRecord, ids[i + 1] as string);
    if (shapeOf(prepared, values) !== shape) return run; // the next run starts with that row
  }
}

/** Inserts the batch's games, in order, with the given ids; returns the last row's pk. */
export function insertGameRows(handle: SqliteHandle, batch: RowBatch): number {
  const prepared = preparedOf(handle);
  const values: unknown[] = []; // one row's content values, reused
  let lastPk = 0;
  for (let start = 0; start < batch.games.length; ) {
    const run = collectRun(prepared, batch, start, values);
    lastPk = writeRun(prepared, handle, batch, run);
    start += run.rows;
  }
  return lastPk;
}
