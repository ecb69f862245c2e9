// An in-memory multimap from 48-bit game keys to games rows (pk), for the SQLite import's dedup check
// (game-keys.ts). Written by hand, as open addressing over one Float64Array, because a JavaScript Map holds
// at most 2^24 entries (a database may hold more games) and would box every 48-bit key as a heap number:
// this takes 32 bytes a game at most, outside the garbage-collected heap. A slot's key and pk sit side by
// side, so that a probe reads one cache line: filling the table is bound by memory latency (measured:
// 600k keys in 160 ms with keys and pks in two arrays and no size given beforehand).

/** Slots per entry at most before the table doubles (a load factor of 1/2 keeps probe runs short). */
const SLOTS_PER_ENTRY = 2;
const MIN_SLOTS = 1 << 10;

export class KeyTable {
  /** Per slot: key + 1 (0: empty), then the pk of the slot's entry. */
  private slots: Float64Array;
  private mask: number;
  private count = 0;

  /** `expected`: how many entries the table will hold, if known (it grows as needed anyway). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots < expected * SLOTS_PER_ENTRY) slots *= 2;
    this.slots = new Float64Array(2 * slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Adds an entry; a key may have several (the same game kept twice, or rows since changed). */
  add(key: number, pk: number): void {
    if ((this.count + 1) * SLOTS_PER_ENTRY > this.mask + 1) this.grow();
    this.place(key + 1, pk);
    this.count++;
  }

  /** Appends the pks of the key's entries to `out`. */
  find(key: number, out: number[]): void {
    const { slots, mask } = this;
    const stored = key + 1;
    // The keys are hash bits: their low 32 bits (>>> 0 takes them) spread the slots evenly.
    for (let slot = (key >>> 0) & mask; slots[2 * slot] !== 0; slot = (slot + 1) & mask) {
      if (slots[2 * slot] === stored) out.push(slots[2 * slot + 1] as number);
    }
  }

  private place(stored: number, pk: number): void {
    const { slots, mask } = this;
    let slot = ((stored - 1) >>> 0) & mask;
    while (slots[2 * slot] !== 0) slot = (slot + 1) & mask;
    slots[2 * slot] = stored;
    slots[2 * slot + 1] = pk;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Float64Array(2 * old.length);
    this.mask = old.length - 1;
    for (let at = 0; at < old.length; at += 2) {
      const stored = old[at] as number;
      if (stored !== 0) this.place(stored, old[at + 1] as number);
    }
  }
}
