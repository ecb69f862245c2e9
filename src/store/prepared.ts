// Hot read queries (the token lookup of every request, the game lists, the feed) are built and compiled by
// Kysely once, then run again with new parameter values. Building and compiling a Kysely query costs more
// than SQLite takes to answer it, and Kysely has no prepared-query API, hence this small helper.
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';

/** Runs a compiled query and returns its rows: the driver's path, or a faster one (sqlite/statements.ts). */
export type RunQuery = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

/** Stands for the i-th argument while the query is built once. */
class Slot {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

/** The driver's path: what Kysely's execute() does, minus building and compiling the query. */
export function kyselyRunner<DB>(db: Kysely<DB>): RunQuery {
  return async (sql, parameters) => (await db.executeQuery(CompiledQuery.raw(sql, [...parameters]))).rows;
}

/** A compiled query: run on its default runner, or `on` another (a replica's: read-routing.ts). */
export interface Prepared<A extends unknown[], R> {
  (...args: A): Promise<R[]>;
  on(run: RunQuery): (...args: A) => Promise<R[]>;
}

/**
 * A query built by `build` once, with placeholders for its `arity` arguments, then run with the values of
 * each call. Every argument must end up as a bound parameter (not in the SQL text): checked here, once.
 */
export function prepared<A extends unknown[], R>(
  run: RunQuery,
  arity: number,
  build: (...args: A) => Compilable<R>,
): Prepared<A, R> {
  const slots = Array.from({ length: arity }, (_, i) => new Slot(i));
  const compiled = build(...(slots as unknown as A)).compile();
  const bound = new Set(compiled.parameters.filter((p) => p instanceof Slot).map((p) => (p as Slot).index));
  if (bound.size !== arity) throw new Error(`prepared query binds ${bound.size} of ${arity} arguments`);
  const { sql } = compiled;
  const template = compiled.parameters;
  const on =
    (runner: RunQuery) =>
    async (...args: A) =>
      (await runner(
        sql,
        template.map((p) => (p instanceof Slot ? args[p.index] : p)),
      )) as R[];
  return Object.assign(on(run), { on });
}
