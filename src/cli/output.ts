// Command output: a human line, or with --json exactly one JSON document for scripts.
import { iso } from '../api/serialize.ts';
import type { Database, TokenInfo } from '../store/index.ts';

export function emit(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
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
