// New games get time-ordered UUIDs (RFC 9562 version 7), made by hand in game-id.ts for speed: they
// must be valid version 7 UUIDs, carry the time they were made, sort by it, and never repeat.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gameId } from '../../src/store/game-id.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds of a version 7 UUID: its first 48 bits. */
const millisOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

test('game ids are version 7 UUIDs of the time they were made, all different, in the order made', () => {
  const before = Date.now();
  const ids = Array.from({ length: 20_000 }, () => gameId()); // many in one millisecond
  const after = Date.now();
  for (const id of ids) {
    assert.match(id, V7);
    assert.ok(millisOf(id) >= before && millisOf(id) <= after, id);
  }
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids, 'sorted as made, within a millisecond too');
});

test("each millisecond's first id has random bits", async () => {
  // More than one pool of random bytes (1,024 milliseconds).
  const firsts: string[] = [];
  for (let ms = Date.now(); firsts.length < 1100; ) {
    const id = gameId();
    if (millisOf(id) === ms) continue;
    ms = millisOf(id);
    firsts.push(id);
    if (firsts.length % 100 === 0) await sleep(1);
  }
  assert.equal(new Set(firsts.map((id) => id.slice(14))).size, firsts.length);
  // 74 random bits: every hex digit outside the time, version and variant takes many values.
  for (const at of [15, 16, 17, 20, 21, 22, 24, 35])
    assert.ok(new Set(firsts.map((id) => id[at])).size >= 8, `digit ${at}`);
});

test('ids made in later milliseconds sort after earlier ones', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(gameId());
    await sleep(2);
  }
  assert.deepEqual([...ids].sort(), ids);
  assert.ok(millisOf(ids[4] as string) > millisOf(ids[0] as string));
});
