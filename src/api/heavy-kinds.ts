// The kinds of heavy request: answers that hold the server's work for long (a whole database's PGN export),
// so that a client must not hold many of them at once (plugins/heavy-requests.ts). Each kind has its own
// limits and settings; a route names its kind when it takes a slot (docs/api.md "Heavy requests"). With them,
// the defaults of the settings around heavy requests: load shedding (src/server/plugins/load-shedding.ts)
// and long answers (long-answers.ts). No imports: the CLI's settings read the defaults without loading the
// server.

export interface HeavyLimits {
  /** How many one app and user may hold at once, across every instance (429 beyond). */
  perClient: number;
  /** How many this instance runs at once, for everyone together (503 beyond). */
  perInstance: number;
}

export interface HeavyKindDefinition extends HeavyLimits {
  /** What the answers call them, in the plural: "at most 2 PGN exports at once per app and user". */
  what: string;
  /** And one of them: "at most 1 PGN export at once". */
  one: string;
  /** The settings' prefix: `<env>_PER_CLIENT`, `<env>_PER_INSTANCE`. */
  env: string;
}

export const HEAVY_KINDS = {
  export: {
    what: 'exports (PGN or NDJSON)',
    one: 'export (PGN or NDJSON)',
    env: 'EXPORTS',
    perClient: 2,
    perInstance: 8,
  },
  // A long-poll holds little (a socket, a waiter) but for up to a minute: a client follows the feed with one
  // at a time, a few when one user runs an app on several devices. An instance holds thousands.
  'long-poll': {
    what: 'long-polls of the changes feed (wait)',
    one: 'long-poll of the changes feed (wait)',
    env: 'LONG_POLLS',
    perClient: 4,
    perInstance: 5000,
  },
  // An expanded page reads and writes 500 games' details at once: a take-over reads one page while it writes
  // the one before.
  'expanded-feed': {
    what: 'expanded pages of the changes feed (expand=game)',
    one: 'expanded page of the changes feed (expand=game)',
    env: 'EXPANDED_FEEDS',
    perClient: 2,
    perInstance: 16,
  },
} as const satisfies Record<string, HeavyKindDefinition>;

export type HeavyKind = keyof typeof HEAVY_KINDS;

export const HEAVY_KIND_NAMES = Object.keys(HEAVY_KINDS) as HeavyKind[];

/** Every kind's limits as defined: what a server gets without settings. */
export function defaultHeavyLimits(): Record<HeavyKind, HeavyLimits> {
  const limits = {} as Record<HeavyKind, HeavyLimits>;
  for (const kind of HEAVY_KIND_NAMES) {
    const { perClient, perInstance } = HEAVY_KINDS[kind];
    limits[kind] = { perClient, perInstance };
  }
  return limits;
}

/** The defaults of the settings around heavy requests (docs/configuration.md). */
export const HEAVY_DEFAULTS = {
  /** How long a lease in Redis lives unless renewed (HEAVY_LEASE_TTL). */
  leaseTtlMs: 30_000,
  /** Mean event-loop delay over a second above which heavy requests are shed (SHED_EVENT_LOOP_DELAY_MS). */
  shedEventLoopDelayMs: 1000,
  /** Share of V8's heap limit in use above which heavy requests are shed (SHED_HEAP_PERCENT). */
  shedHeapPercent: 80,
  /** The longest a long answer may run (STREAM_MAX_DURATION). */
  streamMaxDurationMs: 3_600_000,
  /** The fewest bytes per second the client of a long answer must take (STREAM_MIN_RATE). */
  streamMinBytesPerSecond: 4096,
  /** The window that rate is measured over (STREAM_RATE_WINDOW). */
  streamRateWindowMs: 60_000,
} as const;
