// The invariants the import fuzzer (fuzz.test.ts) checks on each input, imported with importFile into a real
// store. Not a test file itself.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type NormalizeResult, normalizeGame, PgnSplitter, type RawGame } from '../../src/chess/index.ts';
import { decodePgnStream } from '../../src/import/decode.ts';
import { type ImportSummary, importFile } from '../../src/import/index.ts';
import type { NormalizePool } from '../../src/import/normalize-pool.ts';
import type { Store } from '../../src/store/index.ts';
import { assertExportInvariants } from './chess-assertions.ts';
import type { Rng } from './import-fuzz-inputs.ts';

export interface Finding {
  /** Which promise broke. */
  check: string;
  message: string;
}

export interface Checked {
  findings: Finding[];
  summary: ImportSummary | undefined;
  /** Wall time of the import alone. */
  ms: number;
}

async function* piecesOf(pieces: Buffer[]): AsyncGenerator<Buffer> {
  for (const piece of pieces) yield piece;
}

/** The text decodePgnStream makes of the bytes, fed in the given pieces. */
async function decode(pieces: Buffer[]): Promise<string> {
  let text = '';
  for await (const block of decodePgnStream(piecesOf(pieces))) text += block;
  return text;
}

/** The bytes cut at random places into pieces of at most `max` bytes (some empty). */
function cut<T extends Buffer | string>(rng: Rng, whole: T, max: number): T[] {
  const pieces: T[] = [];
  let at = 0;
  while (at < whole.length) {
    const n = rng.int(max + 1);
    pieces.push(whole.slice(at, at + n) as T);
    at += n;
  }
  return pieces;
}

function split(pieces: string[]): RawGame[] {
  const splitter = new PgnSplitter();
  const games: RawGame[] = [];
  // A loop, not push(...): spread as arguments, a piece's games could overflow the stack.
  for (const piece of pieces) for (const game of splitter.push(piece)) games.push(game);
  for (const game of splitter.end()) games.push(game);
  return games;
}

/** What the rejects file holds for a game (rejects.ts): its text, a line break, a blank line, in its line ends. */
function withBlankLine(text: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return text.endsWith('\n') ? `${text}${eol}` : `${text}${eol}${eol}`;
}

/** Whether a line between games may be left out of every game: blank, an escape line or a ';' comment line. */
function ignorable(line: string): boolean {
  return line.trim() === '' || line.startsWith('%') || line.trimStart().startsWith(';');
}

function clip(s: string): string {
  return s.length > 160 ? `${s.slice(0, 160)}...` : s;
}

/** The first difference of two lists, for a message: which item, and where in it. */
function firstDifference(a: readonly string[], b: readonly string[]): string {
  const i = a.findIndex((x, k) => x !== b[k]);
  const at = i === -1 ? Math.min(a.length, b.length) : i;
  const x = a[at] ?? '';
  const y = b[at] ?? '';
  let c = 0;
  while (c < x.length && x.charCodeAt(c) === y.charCodeAt(c)) c++;
  const show = (s: string) => JSON.stringify(s.slice(Math.max(0, c - 40), c + 60));
  return `lengths ${a.length} and ${b.length}, item ${at} (${x.length} and ${y.length} characters) differs at ${c}: ${show(x)} vs ${show(y)}`;
}

/**
 * What a reason or warning says is on the line it names: the token it quotes, or the character it is about.
 * Undefined when it quotes nothing checkable (a clipped token, a message without a line).
 */
function onItsLine(message: string): { line: number; text: string | undefined } | undefined {
  const line = /\bline (\d+)/.exec(message);
  if (!line) return undefined;
  const quoted =
    /(?:unexpected token|unexpected annotation|second result terminator) '([^']*)'/.exec(message)?.[1] ??
    /(?:illegal|ambiguous) move \d+\.(?:\.\.)?(\S+) \(ply/.exec(message)?.[1] ??
    /^tag (\S+) repeated/.exec(message)?.[1] ??
    /malformed tag pair at line \d+: (.*)$/.exec(message)?.[1] ??
    (/^(?:variation cut: )?(?:null move at|piece drop) \d+\.(?:\.\.)?(\S+) \(ply/.exec(message)?.[1] ||
      undefined) ??
    (/unmatched '(.)'/.exec(message)?.[1] ||
      (/variation before any move|variations nested deeper/.test(message) && '(') ||
      (/'\$' without a number|invalid NAG/.test(message) && '$') ||
      (/tag pair after the movetext/.test(message) && '[') ||
      (/unterminated comment/.test(message) && '{') ||
      undefined);
  return { line: Number(line[1]), text: quoted?.endsWith('\u2026') ? undefined : quoted };
}

export class FuzzChecker {
  private readonly store: Store;
  private readonly ownerId: string;
  private readonly dir: string;
  private count = 0;
  /** Inputs whose rejects file, read again, is cut into other games than those rejected (see check). */
  recut = 0;

  constructor(store: Store, ownerId: string, dir: string) {
    this.store = store;
    this.ownerId = ownerId;
    this.dir = dir;
  }

  /**
   * Imports `bytes` into a new database (of at most `maxGames` games, if given) and checks every promise of the
   * import on it.
   */
  async check(bytes: Buffer, rng: Rng, pool: NormalizePool | undefined, maxGames?: number): Promise<Checked> {
    const n = ++this.count;
    const file = join(this.dir, `input-${n}.pgn`);
    const rejectsPath = `${file}.rejected.pgn`;
    writeFileSync(file, bytes);
    const findings: Finding[] = [];
    const found = (check: string, message: string) => findings.push({ check, message });
    const database = await this.store.databases.add({ ownerId: this.ownerId, name: `fuzz ${n}`, maxGames });

    const started = performance.now();
    let summary: ImportSummary | undefined;
    try {
      summary = await importFile({
        store: this.store,
        database,
        file,
        ...(pool ? { pool } : { workers: 0 }),
      });
    } catch (error) {
      found('no exception', (error as Error).stack?.split('\n').slice(0, 4).join(' | ') ?? String(error));
    }
    const ms = performance.now() - started;

    try {
      if (summary) await this.checkSummary(file, bytes, summary, rng, database.id, maxGames, pool, found);
    } catch (error) {
      found(
        'checker',
        `the checks themselves failed: ${(error as Error).stack?.split('\n').slice(0, 3).join(' | ')}`,
      );
    }
    rmSync(file, { force: true });
    rmSync(rejectsPath, { force: true });
    return { findings, summary, ms };
  }

  private async checkSummary(
    file: string,
    bytes: Buffer,
    summary: ImportSummary,
    rng: Rng,
    databaseId: string,
    maxGames: number | undefined,
    pool: NormalizePool | undefined,
    found: (check: string, message: string) => void,
  ): Promise<void> {
    // Decoding and splitting do not depend on where the input is cut into pieces (the import reads 1 MB ones).
    const text = await decode([bytes]);
    const small = bytes.length < 100_000;
    const decodedInPieces = await decode(cut(rng, bytes, small ? 7 : 300_000));
    if (decodedInPieces !== text) found('decoding by pieces', firstDifference([decodedInPieces], [text]));
    const all = split([text]);
    const inPieces = split(cut(rng, text, small ? 50 : 300_000));
    const asText = (g: RawGame) => `${g.index}:${g.line}:${g.text}`;
    if (inPieces.length !== all.length || inPieces.some((g, i) => asText(g) !== asText(all[i] as RawGame)))
      found('splitting by pieces', firstDifference(inPieces.map(asText), all.map(asText)));

    // Nothing is dropped between games: each game's text is where its line number says, and between them are
    // only blank, escape and ';' comment lines.
    const lineStarts = [0];
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
    let end = 0;
    for (const game of all) {
      const start = lineStarts[game.line - 1];
      if (start === undefined || text.slice(start, start + game.text.length) !== game.text) {
        found('game text at its line', `game ${game.index} is not found verbatim at line ${game.line}`);
        return;
      }
      const gap = text.slice(end, start);
      const lost = gap.split('\n').find((line) => !ignorable(line));
      if (start < end)
        found('games in order', `game ${game.index} starts before the end of game ${game.index - 1}`);
      else if (lost !== undefined)
        found(
          'nothing dropped',
          `before game ${game.index} (line ${game.line}): ${clip(JSON.stringify(lost))}`,
        );
      end = start + game.text.length;
    }
    const lost = text
      .slice(end)
      .split('\n')
      .find((line) => !ignorable(line));
    if (lost !== undefined) found('nothing dropped', `after the last game: ${clip(JSON.stringify(lost))}`);

    // The summary adds up, and says what checking each game on its own says. An import that filled its
    // database stops reading: then it reports the games it read.
    const games = summary.stoppedAtMaxGames ? all.slice(0, summary.games) : all;
    const results: NormalizeResult[] = games.map((g) => normalizeGame(g.text, g.line));
    const sum = summary.imported + summary.duplicates + summary.rejected + summary.overLimit;
    if (summary.games !== games.length)
      found('games counted', `summary ${summary.games}, splitter ${all.length}`);
    if (summary.stoppedAtMaxGames !== summary.overLimit > 0)
      found('over the limit', `${summary.overLimit} over the limit, stopped: ${summary.stoppedAtMaxGames}`);
    if (maxGames === undefined ? summary.overLimit > 0 : summary.imported > maxGames)
      found(
        'over the limit',
        `${summary.imported} imported, ${summary.overLimit} over a limit of ${maxGames}`,
      );
    if (sum !== summary.games)
      found(
        'counts add up',
        `${summary.games} games, but ${summary.imported} + ${summary.duplicates} + ${summary.rejected} + ${summary.overLimit}`,
      );
    const rejected = games.filter((_, i) => !(results[i] as NormalizeResult).ok);
    const expectedRejections = rejected.map((g) => {
      const r = results[g.index - 1] as NormalizeResult & { ok: false };
      return `${file}:${g.line} game ${g.index}: ${r.reason}`;
    });
    const rejections = summary.rejections.map((r) => `${r.file}:${r.line} game ${r.game}: ${r.reason}`);
    if (summary.rejected !== rejections.length)
      found('rejections listed', `${summary.rejected} rejected, ${rejections.length} listed`);
    if (rejections.join('\n') !== expectedRejections.join('\n'))
      found('rejections', firstDifference(rejections, expectedRejections));
    const expectedWarnings = games.flatMap((g, i) => {
      const r = results[i] as NormalizeResult;
      return r.ok ? (r.game.warnings ?? []).map((w) => `${file}:${g.line} game ${g.index}: ${w}`) : [];
    });
    const warnings = summary.warnings.map((w) => `${w.file}:${w.line} game ${w.game}: ${w.warning}`);
    if (warnings.join('\n') !== expectedWarnings.join('\n'))
      found('warnings', firstDifference(warnings, expectedWarnings));

    // Reasons and warnings are text (no half of a character beyond U+FFFF), and their line numbers are lines
    // of the input, where what they name is.
    const lines = text.split('\n');
    const claims = [
      ...summary.rejections.map((r) => ({ game: r.game, message: r.reason })),
      ...summary.warnings.map((w) => ({ game: w.game, message: w.warning })),
    ];
    const lastLines = new Map<number, number>();
    for (const { game, message } of claims) {
      if (!message.isWellFormed()) found('well-formed text', `game ${game}: ${JSON.stringify(message)}`);
      const claim = onItsLine(message);
      const g = all[game - 1];
      if (!claim || !g) continue;
      const last = lastLines.get(game) ?? g.line + g.text.split('\n').length - 1;
      lastLines.set(game, last);
      if (claim.line < g.line || claim.line > last)
        found('line numbers', `game ${game} (lines ${g.line}-${last}): ${clip(message)}`);
      else if (claim.text !== undefined && !(lines[claim.line - 1] ?? '').includes(claim.text))
        found(
          'line numbers',
          `game ${game}: line ${claim.line} does not hold ${JSON.stringify(claim.text)}: ${clip(message)}`,
        );
    }
    if (!summary.stoppedAtMaxGames && summary.bytes !== bytes.length)
      found('bytes counted', `${summary.bytes} of ${bytes.length}`);

    // The rejects file holds exactly the rejected games, each as read, and splits into them again.
    const rejectsPath = `${file}.rejected.pgn`;
    let rejects: Buffer | undefined;
    try {
      rejects = readFileSync(rejectsPath);
    } catch {}
    if (rejected.length === 0) {
      if (summary.rejectsFile !== null || rejects) found('rejects file', 'written without a rejected game');
    } else if (summary.rejectsFile !== rejectsPath || !rejects) {
      found('rejects file', `${rejected.length} rejected, rejects file ${summary.rejectsFile}`);
    } else {
      const expected = Buffer.from(rejected.map((g) => withBlankLine(g.text)).join(''));
      if (!rejects.equals(expected))
        found('rejects file', firstDifference([rejects.toString('utf8')], [expected.toString('utf8')]));
      // Read again, the file gives the rejected games again, rejected again; but not always cut alike. A
      // rejected game may have ended only where an accepted one began, which is not in the file: one with tags
      // only, or moves without a result, then runs on into the next rejected game (or the next one's first tag
      // pair no longer starts a game). Nothing is lost then either, but the games differ: counted, not failed.
      const againText = await decode([rejects]);
      const again = split([againText]);
      const againStarts = [0];
      for (let i = againText.indexOf('\n'); i !== -1; i = againText.indexOf('\n', i + 1))
        againStarts.push(i + 1);
      let offset = 0;
      const starts = rejected.map((g) => {
        const start = offset;
        offset += withBlankLine(g.text).length;
        return start;
      });
      const alike =
        again.length === rejected.length && again.every((g, i) => againStarts[g.line - 1] === starts[i]);
      if (!alike) this.recut++;
      else {
        const accepted = again.filter((g) => normalizeGame(g.text).ok);
        if (accepted.length > 0)
          found(
            'rejects file games stay rejected',
            `${accepted.length} accepted, first: ${clip(accepted[0]?.text ?? '')}`,
          );
      }
    }

    // The store holds each kept game once, as its export PGN, in file order.
    const stored: string[] = [];
    for await (const game of this.store.games.databasePgn(databaseId)) stored.push(game.pgn);
    const seen = new Set<string>();
    const kept: { pgn: string; game: RawGame; result: NormalizeResult & { ok: true } }[] = [];
    for (const [i, result] of results.entries()) {
      if (!result.ok || seen.has(result.game.pgn)) continue;
      seen.add(result.game.pgn);
      kept.push({ pgn: result.game.pgn, game: games[i] as RawGame, result });
    }
    if (summary.imported !== stored.length)
      found('imported games stored', `${summary.imported} imported, ${stored.length} in the database`);
    // Up to the limit: the kept games after it were not stored.
    const expectedStored = kept
      .map((k) => k.pgn)
      .slice(0, summary.stoppedAtMaxGames ? summary.imported : undefined);
    if (stored.join('\u0000') !== expectedStored.join('\u0000'))
      found('stored games', firstDifference(stored, expectedStored));

    // Every kept game's export reads back to the same moves, tags, comments and variations, and is a fixed point.
    for (const k of kept) {
      try {
        assertExportInvariants(k.pgn, k.result.game, k.game.text);
      } catch (error) {
        found(
          'export round trip',
          `game ${k.game.index} (line ${k.game.line}): ${clip((error as Error).message)}`,
        );
      }
    }
    if (stored.length === 0) return;
    // And the export of them all, as one file, imports again to the same games.
    const exportFile = `${file}.export.pgn`;
    writeFileSync(exportFile, stored.join('\n'));
    try {
      const database = await this.store.databases.add({
        ownerId: this.ownerId,
        name: `fuzz export ${this.count}`,
      });
      const again = await importFile({
        store: this.store,
        database,
        file: exportFile,
        ...(pool ? { pool } : { workers: 0 }),
      });
      const reimported: string[] = [];
      for await (const game of this.store.games.databasePgn(database.id)) reimported.push(game.pgn);
      if (again.rejected > 0 || again.games !== stored.length)
        found(
          'export re-imports',
          `${stored.length} exported, ${again.games} read, ${again.rejected} rejected: ${clip(again.rejections[0]?.reason ?? '')}`,
        );
      else if (reimported.join('\u0000') !== stored.join('\u0000'))
        found('export re-imports', firstDifference(reimported, stored));
    } finally {
      rmSync(exportFile, { force: true });
      rmSync(`${exportFile}.rejected.pgn`, { force: true });
    }
  }
}
