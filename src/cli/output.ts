// Command output: a human line, or with --json exactly one JSON document for scripts.
import { inspect } from 'node:util';
import { iso } from '../api/serialize.ts';
import { type Database, type Grant, StoreError, type TokenInfo } from '../store/index.ts';
import { CliError } from './errors.ts';
import { cliIo } from './io.ts';

export function emit(json: boolean, value: unknown, human: () => string): void {
  cliIo().stdout.write(json ? `${jsonSafe(JSON.stringify(value, null, 2))}\n` : `${terminalSafe(human())}\n`);
}

/**
 * CHESSPORT_DEBUG asks for stack traces; 0, false, no, off (any case) and empty do not, where any text did
 * (CHESSPORT_DEBUG=0 turned them on).
 */
export function debugWanted(env: NodeJS.ProcessEnv = cliIo().env): boolean {
  const value = (env.CHESSPORT_DEBUG ?? '').trim().toLowerCase();
  return !['', '0', 'false', 'no', 'off'].includes(value);
}

/** `n` and the noun, singular for 1 ("1 game", "2 games"); `plural` where it is not the noun and an s. */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/**
 * What a command that failed writes on stderr: one line for the operator, never a stack trace; CHESSPORT_DEBUG=1
 * adds the stack for a bug report.
 */
export function failureReport(error: unknown): string {
  const stack = debugWanted() ? `${terminalSafe(inspect(error))}\n` : '';
  return `${stack}chessport: ${terminalSafe(failureLine(error))}\n`;
}

/** The error in one line; one we did not expect says how to see more. */
export function failureLine(error: unknown): string {
  const expected = error instanceof CliError || error instanceof StoreError;
  const message = error instanceof Error ? error.message || error.name : String(error);
  const line = message.trim().replace(/\s*\n\s*/g, ' ') || 'failed';
  return expected || debugWanted() ? line : `${line} (CHESSPORT_DEBUG=1 shows the stack trace)`;
}

// What a terminal obeys rather than shows: C0 controls (ESC starts the sequences that recolour, clear the
// screen, set the window title or write to the clipboard), DEL and C1 controls (U+009B is a one-character
// CSI, which the Latin-1 reading of a PGN line makes of byte 0x9B); and the bidirectional formatting
// characters, which reorder what is shown around them. Player names, tags and rejection reasons come from
// PGN files that anyone may have written, and commands print them on the operator's terminal.
// Written as what is allowed (the line break, printable ASCII, everything from U+00A0), as Biome refuses C0
// characters in a pattern.
const CONTROLS = /[^\n\u0020-\u007e\u00a0-\uffff]/g;
const C1_AND_DEL = /[\u007f-\u009f]/g;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text for a terminal: every control character but the line break, and every bidi control, as `\u001b`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, escaped).replace(BIDI, escaped);
}

/** JSON.stringify's text with DEL, C1 and bidi controls escaped too (it escapes C0 only): the same JSON value. */
function jsonSafe(json: string): string {
  return json.replace(C1_AND_DEL, escaped).replace(BIDI, escaped);
}

/** A column of a listing: its heading, and its cell in a row. */
export type Column<T> = readonly [heading: string, cell: (row: T) => string];

/** A listing: `document` with --json, else a table of `rows` under the columns' headings. */
export function emitTable<T>(
  json: boolean,
  document: unknown,
  rows: readonly T[],
  columns: Column<T>[],
): void {
  emit(json, document, () =>
    table([columns.map(([heading]) => heading), ...rows.map((row) => columns.map(([, cell]) => cell(row)))]),
  );
}

export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * The latest time a Date holds (year 275760). A token issued before --expires-in had a maximum may expire
 * later than that (99999999d): it is shown as expiring then, rather than crashing every listing.
 */
const LAST_DATE_MS = 8.64e15;

export function tokenJson(token: TokenInfo, now = Date.now()) {
  const state =
    token.revokedAt !== null
      ? 'revoked'
      : token.expiresAt !== null && token.expiresAt <= now
        ? 'expired'
        : 'active';
  return {
    id: token.id,
    user: token.userLogin,
    app: token.appName,
    scopes: token.scopes,
    state,
    createdAt: iso(token.createdAt),
    expiresAt: token.expiresAt === null ? null : iso(Math.min(token.expiresAt, LAST_DATE_MS)),
    revokedAt: token.revokedAt === null ? null : iso(token.revokedAt),
    grant: token.grantId,
  };
}

export function grantJson(grant: Grant) {
  return {
    id: grant.id,
    user: grant.userLogin,
    app: grant.appName,
    scopes: grant.scopes,
    state: grant.revokedAt === null ? 'active' : 'revoked',
    createdAt: iso(grant.createdAt),
    lastUsedAt: grant.lastUsedAt === null ? null : iso(grant.lastUsedAt),
    revokedAt: grant.revokedAt === null ? null : iso(grant.revokedAt),
  };
}

export function databaseCliJson(db: Database, owner: string, games: number) {
  return {
    id: db.id,
    owner,
    name: db.name,
    slug: db.slug,
    private: db.private,
    maxGames: db.maxGames,
    games,
    createdAt: iso(db.createdAt),
  };
}
