// The test cluster helper (test/helpers/pg-cluster.ts): a primary and two streaming replicas, one of them
// delayed; a write on the primary reaches the prompt replica, reaches the delayed one only later, and a
// replica promoted after the primary stops takes writes. Skips, saying why, without the server binaries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PG_CLUSTER_SKIP, type PgCluster, pgCluster } from '../helpers/pg-cluster.ts';
import { queryPostgres } from '../helpers/stores.ts';

describe('a test PostgreSQL cluster', { skip: PG_CLUSTER_SKIP ?? false }, () => {
  let cluster: PgCluster;
  let database: string;
  before(async () => {
    cluster = await pgCluster([{}, { applyDelayMs: 1500 }]);
    database = await cluster.createDatabase();
  });
  after(() => cluster?.cleanup());

  const count = async (url: string) =>
    (await queryPostgres<{ n: number }>(url, 'select cast(count(*) as integer) as n from t'))[0]?.n;

  test('replicas replay the primary: the delayed one only after its delay', async () => {
    const [prompt, delayed] = cluster.replicas;
    assert.ok(prompt && delayed);
    await queryPostgres(cluster.primary.url(database), 'create table t (n integer)');
    await cluster.caughtUp(prompt);
    await cluster.caughtUp(delayed);
    const written = Date.now();
    await queryPostgres(cluster.primary.url(database), 'insert into t values (1)');
    await cluster.caughtUp(prompt);
    assert.equal(await count(prompt.url(database)), 1);
    // Still in its delay unless the machine took that long to get here.
    const delayedCount = await count(delayed.url(database));
    if (Date.now() - written < 1000) assert.equal(delayedCount, 0);
    await cluster.caughtUp(delayed);
    assert.equal(await count(delayed.url(database)), 1);
    assert.ok(Date.now() - written >= 1400, 'the delayed replica replayed the commit before its delay');
    await assert.rejects(queryPostgres(prompt.url(database), 'insert into t values (2)'), /read-only/);
  });

  test('the primary stops, a replica is promoted and takes writes', async () => {
    const [prompt] = cluster.replicas;
    assert.ok(prompt);
    cluster.primary.stop('immediate');
    assert.equal(cluster.primary.running, false);
    await assert.rejects(queryPostgres(cluster.primary.url(database), 'select 1'));
    await cluster.promote(prompt);
    await queryPostgres(prompt.url(database), 'insert into t values (3)');
    assert.equal(await count(prompt.url(database)), 2);
  });
});
