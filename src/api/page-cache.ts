// Rendered game-list pages, kept per owner and URL with the owner's games version (Store.gamesVersion) they
// were rendered at, and served again while that version is current. The version is read from the store on
// every request, so a write by any process or instance is seen by the next request: the cache can never
// serve a page the store would not give. What it saves is reading, mapping, serialising and hashing the
// 50-200 games of a page that a polling client asks for again and again.
//
// Bounded in bytes (PAGE_CACHE_MB), least recently used first out. A Map keeps insertion order, which is
// all an LRU needs; no library is worth a dependency for these thirty lines.

export interface CachedPage {
  /** Store.gamesVersion of the owner when the page was rendered. */
  version: number;
  /** The serialised JSON answer, exactly as the route would send it. */
  body: Buffer;
  /** The Link header of the page (absent on a single page). */
  link: string | undefined;
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
