// Rendered game-list pages, kept per owner and URL with the owner's games version (store.games.version) they
// were rendered at, and served again while that version is current. The version is read from the store on
// every request, so a write by any process or instance is seen by the next request: the cache can never
// serve a page the store would not give. What it saves is reading, mapping, serialising and hashing the
// 50-200 games of a page that a polling client asks for again and again.
//
// Bounded in bytes (PAGE_CACHE_MB), least recently used first out. A Map keeps insertion order, which is
// all an LRU needs; no library is worth a dependency for these thirty lines.

import type { ListTotal } from './params.ts';

export interface CachedPage {
  /** store.games.version of the owner when the page was rendered. */
  version: number;
  /** The serialised JSON answer, exactly as the route would send it. */
  body: Buffer;
  /** The Link header of the page (absent on a single page). */
  link: string | undefined;
  /** The list's length when the page was rendered (X-Total-Count, or X-Total-Count-Exceeds). */
  total: ListTotal;
  /** Its strong ETag value (conditional.ts), computed once with the body. */
  tag: string;
}

export const DEFAULT_PAGE_CACHE_BYTES = 64 * 1024 * 1024;

/** Bytes an entry holds beyond its body and key: the object, the tag, the link. */
const OVERHEAD = 256;

export class PageCache {
  readonly maxBytes: number;
  #bytes = 0;
  readonly #entries = new Map<string, CachedPage>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** Bytes held now (bodies, keys and links, plus a fixed overhead per entry). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The page stored under key if it was rendered at `version`; a stale one is dropped. */
  get(key: string, version: number): CachedPage | undefined {
    const page = this.#entries.get(key);
    if (!page) return undefined;
    this.#entries.delete(key);
    if (page.version !== version) {
      this.#bytes -= sizeOf(key, page);
      return undefined;
    }
    this.#entries.set(key, page); // most recently used last
    return page;
  }

  set(key: string, page: CachedPage): void {
    const size = sizeOf(key, page);
    if (size > this.maxBytes) return;
    const old = this.#entries.get(key);
    // A page rendered at an older version than the one stored (a slower concurrent request) must not
    // replace it.
    if (old && old.version > page.version) return;
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= sizeOf(key, old);
    }
    while (this.#bytes + size > this.maxBytes) {
      const [oldestKey, oldest] = this.#entries.entries().next().value as [string, CachedPage];
      this.#entries.delete(oldestKey);
      this.#bytes -= sizeOf(oldestKey, oldest);
    }
    this.#entries.set(key, page);
    this.#bytes += size;
  }
}

function sizeOf(key: string, page: CachedPage): number {
  return page.body.length + key.length + (page.link?.length ?? 0) + OVERHEAD;
}

/**
 * Where game lists continue, learned from the pages rendered: the list position of the game before
 * offset o of a list at a version of the owner's games. A client paging by offset (Link `next`) asks next
 * for exactly the offset where its last page ended, and that page seeks to the position instead of
 * skipping o games: 535k games in, a skip took 22 ms of the event loop on SQLite and 270-330 ms of
 * PostgreSQL's CPU (every skipped row read), so walking a whole list by offset cost time quadratic in
 * its length. Positions are kept per version (any write makes new ones) and bounded in number, least
 * recently used first out. As for pages: a position learned from rows newer than its version serves only
 * requests that read that version before those rows were committed.
 */
export class ListPositions {
  readonly #max: number;
  readonly #positions = new Map<string, number>();

  constructor(max = 50_000) {
    this.#max = max;
  }

  get size(): number {
    return this.#positions.size;
  }

  get(key: string): number | undefined {
    const position = this.#positions.get(key);
    if (position === undefined) return undefined;
    this.#positions.delete(key);
    this.#positions.set(key, position); // most recently used last
    return position;
  }

  set(key: string, position: number): void {
    this.#positions.delete(key);
    this.#positions.set(key, position);
    if (this.#positions.size > this.#max)
      this.#positions.delete(this.#positions.keys().next().value as string);
  }
}
