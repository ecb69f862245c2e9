// The SQLite statement cache marks bound parameters so that SQLite plans each statement once (see planOnce):
// the rewrite must leave quoted text alone, and the statements must keep their answers and their index use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { planOnce, sqliteRunner, withStatementCache } from '../../../src/store/sqlite/statements.ts';

test('planOnce writes every bound parameter as +? and leaves strings and identifiers alone', () => {
  assert.equal(
    planOnce("select \"a?\" from t where x = ? and y in (?, ?) and z = 'it''s ?' limit ? offset ?"),
    "select \"a?\" from t where x = +? and y in (+?, +?) and z = 'it''s ?' limit +? offset +?",
  );
  assert.equal(planOnce('select `q?`, 1'), 'select `q?`, 1');
});

test('statements through the cache give the same rows, and still search by index', () => {
  const db = new Database(':memory:');
  db.exec(
    'create table g (pk integer primary key, owner text not null, deleted integer not null, name text)',
  );
  db.exec('create index g_owner on g (owner, deleted, pk)');
  const insert = db.prepare('insert into g (owner, deleted, name) values (?, ?, ?)');
  for (let i = 0; i < 200; i++) insert.run(i % 2 ? 'a' : 'b', i % 7 === 0 ? 1 : 0, `n${i}`);
  const cached = withStatementCache(db);
  const sql = 'select name from g where owner = ? and deleted = ? order by pk limit ? offset ?';
  for (const [owner, limit, offset] of [
    ['a', 5, 0],
    ['b', 3, 10],
    ['a', 0, 0],
    ['a', 1, 1],
  ] as const) {
    assert.deepEqual(
      cached.prepare(sql).all([owner, 0, limit, offset]),
      db.prepare(sql).all(owner, 0, limit, offset),
      `${owner} ${limit} ${offset}`,
    );
  }
  const plan = db.prepare(`explain query plan ${planOnce(sql)}`).all('a', 0, 5, 0) as { detail: string }[];
  assert.match(
    plan.map((p) => p.detail).join('\n'),
    /SEARCH g USING INDEX g_owner \(owner=\? AND deleted=\?\)/,
  );
  db.close();
});

test('a hot read inside a write transaction of the same connection fails, rather than see rows not committed', async () => {
  const db = new Database(':memory:');
  db.exec('create table g (pk integer primary key, name text)');
  const run = sqliteRunner(withStatementCache(db), db);
  const sql = 'select name from g';
  assert.deepEqual(await run(sql, []), []);
  db.exec('begin immediate');
  db.exec("insert into g (name) values ('not committed')");
  await assert.rejects(run(sql, []), /a hot read ran inside a write transaction/);
  db.exec('rollback');
  assert.deepEqual(await run(sql, []), []);
});
