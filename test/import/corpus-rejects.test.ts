// Every file of the shared PGN corpus imported with the real CLI: nothing is silently dropped. Per file, the
// games imported, skipped as duplicates and rejected add up to the games in the file (the corpus table of
// test/chess), and the rejects file holds exactly the rejected games: it exists only when something was
// rejected, holds each rejected game's original text (found verbatim at the line the importer reported), in
// file order, and nothing else; imported again, every game in it is rejected again and none is imported.
//
// The corpus folders are read-only (no write permission bits), so the rejects files go to the working folder
// (docs/import.md, the rejects file), also when the tests run as root. Were they writable, the default rejects files would land
// in the shared corpus: then the suite does not run. Files over 5 MB are imported only with
// CHESSPORT_FULL_CORPUS=1.
import assert from 'node:assert/strict';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PgnSplitter, type RawGame } from '../../src/chess/index.ts';
import { decodePgnStream } from '../../src/import/decode.ts';
import { CORPUS, NO_CORPUS } from '../helpers/corpus.ts';
import { CORPUS_FILES, EXPECTED, FULL } from '../helpers/corpus-table.ts';
import { cliJson, type Env, tempEnv } from '../helpers/harness.ts';

const MAX_BYTES = 5_000_000;

interface FileSummary {
  file: string;
  games: number;
  imported: number;
  duplicates: number;
  rejected: number;
  rejections: { file: string; line: number; game: number; reason: string }[];
  rejectsFile: string | null;
}

interface ImportJson {
  files: FileSummary[];
}

/** The file as the importer decodes it, and its games as the splitter cuts them. */
async function readGames(path: string): Promise<{ text: string; games: RawGame[] }> {
  let text = '';
  for await (const piece of decodePgnStream(createReadStream(path))) text += piece;
  const splitter = new PgnSplitter();
  return { text, games: [...splitter.push(text), ...splitter.end()] };
}

/**
 * What the rejects file must hold for these games: each original text, then a line break and a blank line,
 * in the game's own line ends.
 */
function rejectsContent(texts: string[]): string {
  return texts
    .map((t) => {
      const eol = t.includes('\r\n') ? '\r\n' : '\n';
      return `${t.endsWith('\n') ? t : t + eol}${eol}`;
    })
    .join('');
}

/** A folder with a write permission bit, where an import would put its rejects file. */
const writable = (folder: string) => (statSync(folder).mode & 0o222) !== 0;

const included = CORPUS_FILES.filter((f) => FULL || statSync(join(CORPUS, f)).size <= MAX_BYTES);
const folders = [...new Set(included.map((f) => dirname(f)))];
const skip =
  CORPUS_FILES.length === 0
    ? NO_CORPUS
    : folders.some((f) => writable(join(CORPUS, f))) &&
      `the corpus at ${CORPUS} is writable: rejects would go into it`;

describe('rejects file per corpus file', { skip }, () => {
  let env: Env;
  /** One import per corpus folder (one CLI run for all its files), then one of its rejects files. */
  const first = new Map<string, FileSummary>();
  const again = new Map<string, FileSummary>();
  const games = new Map<string, number>();

  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'corpus']);
    for (const folder of folders) {
      const files = included.filter((f) => dirname(f) === folder);
      const paths = files.map((f) => join(CORPUS, f));
      const result = await cliJson<ImportJson>(env, [
        'import',
        ...paths,
        '--user',
        'corpus',
        '--database',
        folder,
      ]);
      for (const [i, summary] of result.files.entries()) first.set(files[i] as string, summary);
      const list = await cliJson<{ slug: string; games: number }[]>(env, [
        'databases',
        'list',
        '--user',
        'corpus',
      ]);
      games.set(folder, list.find((d) => d.slug === folder)?.games ?? -1);

      const rejected = files.filter((f) => first.get(f)?.rejectsFile);
      if (rejected.length === 0) continue;
      const rejectsPaths = rejected.map((f) => resolve(env.dir, first.get(f)?.rejectsFile as string));
      const retry = await cliJson<ImportJson>(env, [
        'import',
        ...rejectsPaths,
        '--user',
        'corpus',
        '--database',
        `${folder} rejects`,
      ]);
      for (const [i, summary] of retry.files.entries()) again.set(rejected[i] as string, summary);
    }
  });
  after(() => env?.cleanup());

  test('every imported game is in the store once per database', () => {
    for (const folder of folders) {
      const imported = included
        .filter((f) => dirname(f) === folder)
        .reduce((sum, f) => sum + (first.get(f)?.imported ?? 0), 0);
      assert.equal(games.get(folder), imported, folder);
    }
  });

  for (const file of included) {
    const expected = EXPECTED[file];
    test(file, { skip: !expected && 'not in the corpus table (test/helpers/corpus-table.ts)' }, async () => {
      const summary = first.get(file) as FileSummary;
      const path = join(CORPUS, file);
      const rejectedCount = (expected?.games ?? 0) - (expected?.ok ?? 0);
      assert.equal(summary.games, expected?.games, 'games read');
      assert.equal(
        summary.imported + summary.duplicates + summary.rejected,
        summary.games,
        'all accounted for',
      );
      assert.equal(summary.rejected, rejectedCount, 'games rejected');
      assert.equal(summary.rejections.length, summary.rejected);

      if (summary.rejected === 0) {
        assert.equal(summary.rejectsFile, null, 'no rejects file without a rejected game');
        assert.ok(!existsSync(join(env.dir, `${basename(path)}.rejected.pgn`)));
        assert.ok(!existsSync(`${path}.rejected.pgn`));
        return;
      }
      const where = resolve(env.dir, summary.rejectsFile as string);
      assert.equal(where, join(env.dir, `${basename(path)}.rejected.pgn`), 'in the working folder');

      // Each rejection names a game by number and line; its original text starts there, verbatim.
      const source = await readGames(path);
      const lineStarts = [0];
      for (let i = source.text.indexOf('\n'); i !== -1; i = source.text.indexOf('\n', i + 1))
        lineStarts.push(i + 1);
      const texts = summary.rejections.map((r) => {
        const game = source.games[r.game - 1] as RawGame;
        assert.equal(game.line, r.line, `game ${r.game} starts at line ${r.line}`);
        const start = lineStarts[r.line - 1] as number;
        assert.equal(
          source.text.slice(start, start + game.text.length),
          game.text,
          `game ${r.game} verbatim`,
        );
        return game.text;
      });
      assert.equal(
        readFileSync(where, 'utf8'),
        rejectsContent(texts),
        'the rejected games, and nothing else',
      );

      const retry = again.get(file) as FileSummary;
      assert.deepEqual(
        [retry.games, retry.rejected, retry.imported, retry.duplicates],
        [summary.rejected, summary.rejected, 0, 0],
        'imported again, every game of the rejects file is rejected again',
      );
      // Reasons name lines of their file, which differ in the rejects file.
      const reason = (r: { reason: string }) => r.reason.replace(/line \d+/g, 'line _');
      assert.deepEqual(retry.rejections.map(reason), summary.rejections.map(reason), 'for the same reasons');
    });
  }
});
