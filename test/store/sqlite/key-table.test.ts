// The in-memory key table of the SQLite dedup check (sqlite/key-table.ts): every entry is found after the
// table has grown many times, a key may have several pks, keys at both ends of the 48-bit range work, and a pk
// that does not fit is refused rather than cut.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyTable } from '../../../src/store/sqlite/key-table.ts';

const found = (table: KeyTable, key: number) => {
  const out: number[] = [];
  table.find(key, out);
  return out.sort((a, b) => a - b);
};

test('finds each of 100,000 entries after growing, and nothing for keys never added', () => {
  const table = new KeyTable();
  // Keys spread like hash bits, and some that share their low 32 bits (the slot) with another.
  const keyOf = (i: number) => (i * 2654435761) % 2 ** 48;
  for (let i = 0; i < 100_000; i++) table.add(keyOf(i), i + 1);
  table.add(2 ** 40 + keyOf(7), 999_999);
  assert.equal(table.size, 100_001);
  for (let i = 0; i < 100_000; i += 997) assert.deepEqual(found(table, keyOf(i)), [i + 1]);
  assert.deepEqual(found(table, 2 ** 40 + keyOf(7)), [999_999]);
  assert.deepEqual(found(table, 2 ** 47 + 12345), []);
});

test('a key keeps all its pks; keys 0 and 2^48 - 1 are keys like any other', () => {
  const table = new KeyTable(4);
  table.add(0, 5);
  table.add(2 ** 48 - 1, 6);
  table.add(42, 7);
  table.add(42, 9);
  assert.deepEqual(found(table, 0), [5]);
  assert.deepEqual(found(table, 2 ** 48 - 1), [6]);
  assert.deepEqual(found(table, 42), [7, 9]);
  assert.deepEqual(found(table, 43), []);
  assert.throws(() => table.add(1, 2 ** 32), RangeError, 'a pk must fit in 32 bits');
});
