// The settings of the pool's sessions (lock_timeout, statement_timeout), in the form the pool mode allows.
// Straight to PostgreSQL (or through a pooler in session mode) each connection is a session of its own: the
// settings are start-up parameters of the connections to come, and a SET on those open. Through a pooler in
// transaction mode (PgBouncer's pool_mode = transaction) a connection reaches a different server session at
// each transaction: a start-up parameter is refused (PgBouncer 1.18: "unsupported startup parameter"), and a
// SET would stay behind on whichever server session ran it, for another client. There each write transaction
// takes the settings for itself as its first statement (set_config(..., true): SET LOCAL); the statements
// outside a transaction run with the server's settings for the role (docs/operations.md, "Behind a pooler").
import { type Kysely, sql } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import type { PoolMode } from '../adapter.ts';
import type { DB } from '../schema.ts';

export type SessionSetting = 'lock_timeout' | 'statement_timeout';

/** Sets a setting of every session of a pool, as the pool mode allows. */
export interface Sessions {
  set(name: SessionSetting, ms: number): void;
  /** Gives a write transaction the settings, where the sessions cannot keep them. */
  begin(trx: Kysely<DB>): Promise<void>;
}

/** The sessions of `pool`, whose connections are reported by its 'connect' events from now on. */
export function poolSessions(pool: Pool, mode: PoolMode): Sessions {
  return mode === 'transaction' ? transactionSettings() : sessionSettings(pool);
}

function sessionSettings(pool: Pool): Sessions {
  const clients = new Set<PoolClient>();
  pool.on('connect', (client) => {
    clients.add(client);
    client.once('end', () => clients.delete(client));
  });
  return {
    set(name, ms) {
      const value = Math.round(ms);
      pool.options[name] = value; // a start-up parameter of the connections to come
      // Those open now are idle (set while nothing else runs): the SET goes before their next query.
      for (const client of clients) client.query(`set ${name} = ${value}`).catch(() => undefined);
    },
    async begin() {},
  };
}

function transactionSettings(): Sessions {
  const values = new Map<SessionSetting, string>();
  return {
    set(name, ms) {
      values.set(name, String(Math.round(ms)));
    },
    async begin(trx) {
      if (values.size === 0) return;
      const calls = [...values].map(([name, value]) => sql`set_config(${name}, ${value}, true)`);
      await sql`select ${sql.join(calls)}`.execute(trx);
    },
  };
}
