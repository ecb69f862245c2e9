// An in-memory multimap from 48-bit game keys to games rows (pk), for the SQLite import's dedup check
// (game-keys.ts). Written by hand, as open addressing over one Uint32Array, because a JavaScript Map holds at
// most 2^24 entries (a database may hold more games) and would box every 48-bit key as a heap number. A slot
// is three words side by side (the key's high 16 bits + 1, 0 for an empty slot; its low 32 bits; the pk), so
// that a probe reads one cache line: filling the table is bound by memory latency. 18 to 36 bytes a game,
// outside the garbage-collected heap: 25 MB for a million games.

/** The table doubles before more than 2/3 of its slots are taken (linear probing stays short). */
const MAX_LOAD = 2 / 3;
const MIN_SLOTS = 1 << 10;
const WORDS = 3;
const TWO_TO_32 = 2 ** 32;

export class KeyTable {
  private slots: Uint32Array;
  private mask: number;
  private count = 0;

  /** `expected`: how many entries the table will hold, if known (it grows as needed anyway). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots * MAX_LOAD < expected) slots *= 2;
    this.slots = new Uint32Array(WORDS * slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Adds an entry (pk below 2^32); a key may have several (the same game kept twice, rows since changed). */
  add(key: number, pk: number): void {
    if (pk >= TWO_TO_32 || pk < 0) throw new RangeError(`pk ${pk} out of range`);
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    this.place(Math.floor(key / TWO_TO_32) + 1, key >>> 0, pk);
    this.count++;
  }

  /** Appends the pks of the key's entries to `out`. */
  find(key: number, out: number[]): void {
    const { slots, mask } = this;
    const high = Math.floor(key / TWO_TO_32) + 1;
    const low = key >>> 0;
    // The keys are hash bits: their low 32 bits spread the slots evenly.
    for (let slot = low & mask; slots[WORDS * slot] !== 0; slot = (slot + 1) & mask) {
      const at = WORDS * slot;
      if (slots[at] === high && slots[at + 1] === low) out.push(slots[at + 2] as number);
    }
  }

  private place(high: number, low: number, pk: number): void {
    const { slots, mask } = this;
    let slot = low & mask;
    while (slots[WORDS * slot] !== 0) slot = (slot + 1) & mask;
    const at = WORDS * slot;
    slots[at] = high;
    slots[at + 1] = low;
    slots[at + 2] = pk;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(2 * old.length);
    this.mask = (2 * old.length) / WORDS - 1;
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at] !== 0) this.place(old[at] as number, old[at + 1] as number, old[at + 2] as number);
    }
  }
}
