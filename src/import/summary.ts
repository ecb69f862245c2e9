// What the import of one file reports: its summary, and the failure that stops it part-way with the summary
// of what it had done by then.

export interface Rejection {
  file: string;
  line: number;
  game: number;
  reason: string;
}

/**
 * Something about a game that was kept but not as written: a variation cut at a bad move, a repeated tag,
 * moves without a result terminator (normalizeGame).
 */
export interface ImportWarning {
  file: string;
  line: number;
  game: number;
  warning: string;
}

export interface ImportSummary {
  file: string;
  games: number;
  imported: number;
  duplicates: number;
  rejected: number;
  /** Games not added because the database reached maxGames; the import stopped there. */
  overLimit: number;
  stoppedAtMaxGames: boolean;
  rejections: Rejection[];
  rejectsFile: string | null;
  /** Per kept game, what was not kept as written (ImportWarning); reported as rejections are. */
  warnings: ImportWarning[];
  bytes: number;
  seconds: number;
}

/** The summary of a file before any of it is read. */
export function emptySummary(file: string): ImportSummary {
  return {
    file,
    games: 0,
    imported: 0,
    duplicates: 0,
    rejected: 0,
    overLimit: 0,
    stoppedAtMaxGames: false,
    rejections: [],
    rejectsFile: null,
    warnings: [],
    bytes: 0,
    seconds: 0,
  };
}

/** The cause of an ImportFailure when the import was stopped through its signal. */
export class ImportInterrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/**
 * An import that stopped part-way: its cause, and what it had done by then (`summary`: the games of the
 * batches committed, which a second run of the same import skips as duplicates).
 */
export class ImportFailure extends Error {
  readonly summary: ImportSummary;

  constructor(summary: ImportSummary, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.summary = summary;
  }
}
