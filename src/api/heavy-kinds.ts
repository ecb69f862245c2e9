// The kinds of heavy request: answers that hold the server's work for long (a whole database's PGN export),
// so that a client must not hold many of them at once (plugins/heavy-requests.ts). Each kind has its own
// limits and settings; a route names its kind when it takes a slot (docs/api.md "Heavy requests"). No imports:
// the CLI's settings read the defaults without loading the server.

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
  export: { what: 'PGN exports', one: 'PGN export', env: 'EXPORTS', perClient: 2, perInstance: 8 },
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
