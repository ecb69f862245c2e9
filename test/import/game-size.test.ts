// Games too large to check: one with a 100 MB comment is rejected for its size, while it is read, into the
// rejects file whole, and the rest of the file imports, with the command's peak memory well under 1 GB
// (measured by the process itself: test/helpers/peak-rss.ts). --max-game-size (MAX_GAME_SIZE_MB) sets the limit.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { BIN, cli, cliJson, type Env, ROOT, tempEnv } from '../helpers/harness.ts';

const run = promisify(execFile);

type ImportJson = {
  files: {
    imported: number;
    rejected: number;
    rejections: { line: number; game: number; reason: string }[];
    rejectsFile: string | null;
  }[];
};

const game = (name: string, comment = '') =>
  `[Event "${name}"]\n[White "${name} White"]\n[Black "${name} Black"]\n[Result "1-0"]\n\n` +
  `1. e4 ${comment}e5 2. Nf3 Nc6 1-0\n`;

/** Three games, the second with a comment of `mb` MB: on one line, or wrapped into lines of 79 characters. */
async function writeHuge(path: string, mb: number, wrapped: boolean): Promise<string> {
  const out = createWriteStream(path);
  const second = game('Huge', '{').split('{');
  out.write(`${game('Before')}\n${second[0]}{`);
  const line = wrapped ? `${'analysis '.repeat(8)}line\n` : 'analysis'.repeat(8);
  const block = line.repeat(Math.ceil((1 << 20) / line.length));
  for (let i = 0; i < mb; i++) if (!out.write(block)) await new Promise((r) => out.once('drain', r));
  out.end(`} ${second[1]}\n${game('After')}`);
  await finished(out);
  return path;
}

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

/** `chessport import ... --json` with its peak RSS in MiB. */
async function importMeasured(args: string[]): Promise<{ result: ImportJson; peakMb: number }> {
  const rss = join(env.dir, 'peak-rss');
  const { stdout } = await run(
    process.execPath,
    ['--import', join(ROOT, 'test/helpers/peak-rss.ts'), BIN, 'import', ...args, '--json'],
    { env: { ...env.env, PEAK_RSS_FILE: rss }, cwd: env.dir, maxBuffer: 64 << 20 },
  );
  return { result: JSON.parse(stdout) as ImportJson, peakMb: Number(readFileSync(rss, 'utf8')) / 1024 };
}

describe('a game too large to check', () => {
  for (const wrapped of [false, true]) {
    test(`a 100 MB comment ${wrapped ? 'over many lines' : 'on one line'}: rejected with its reason, the rest imported, peak RSS under 1 GB`, async () => {
      const file = await writeHuge(join(env.dir, `huge-${wrapped}.pgn`), 100, wrapped);
      const { result, peakMb } = await importMeasured([
        file,
        '--user',
        'alice',
        '--database',
        `Huge ${wrapped}`,
      ]);
      const [summary] = result.files;
      assert.equal(summary?.imported, 2);
      assert.equal(summary?.rejected, 1);
      assert.equal(summary?.rejections[0]?.game, 2);
      assert.equal(summary?.rejections[0]?.line, 8);
      assert.match(
        summary?.rejections[0]?.reason ?? '',
        /^the game is [\d,]+ characters long, more than the largest game the import checks \(32 MB; --max-game-size sets it\)$/,
      );
      assert.ok(peakMb < 1024, `peak RSS ${peakMb.toFixed(0)} MB`);
      // The rejects file holds the game's text whole, as read, and nothing else.
      const rejects = summary?.rejectsFile as string;
      const text = readFileSync(file, 'utf8');
      const start = text.indexOf('[Event "Huge"]');
      const end = text.indexOf('[Event "After"]');
      assert.equal(statSync(rejects).size, end - start);
      const kept = readFileSync(rejects, 'utf8');
      assert.equal(kept, `${text.slice(start, end - 1)}\n`);
    });
  }

  test('--max-game-size and MAX_GAME_SIZE_MB set the limit; a bad value stops the command before it imports', async () => {
    const file = await writeHuge(join(env.dir, 'two.pgn'), 2, true);
    const flagged = await cliJson<ImportJson>(env, [
      'import',
      file,
      '--user',
      'alice',
      '--database',
      'Limited',
      '--max-game-size',
      '1',
    ]);
    assert.equal(flagged.files[0]?.rejected, 1);
    assert.match(flagged.files[0]?.rejections[0]?.reason ?? '', /checks \(1 MB; --max-game-size sets it\)/);
    const roomy = await cli({ ...env, env: { ...env.env, MAX_GAME_SIZE_MB: '3' } }, [
      'import',
      file,
      '--user',
      'alice',
      '--database',
      'Roomy',
      '--json',
    ]);
    assert.equal(roomy.code, 0, roomy.stderr);
    assert.deepEqual(
      (JSON.parse(roomy.stdout) as ImportJson).files.map((f) => [f.imported, f.rejected]),
      [[3, 0]],
    );
    for (const [args, extra, message] of [
      [['--max-game-size', '0'], {}, /--max-game-size must be a positive integer, got "0"/],
      [['--max-game-size', '1000'], {}, /--max-game-size is at most 512 \(MB\), got "1000"/],
      [[], { MAX_GAME_SIZE_MB: '32MB' }, /MAX_GAME_SIZE_MB must be a positive integer, got "32MB"/],
    ] as const) {
      const refused = await cli({ ...env, env: { ...env.env, ...extra } }, [
        'import',
        file,
        '--user',
        'alice',
        '--database',
        'Refused',
        ...args,
      ]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, message);
    }
    const databases = await cliJson<{ name: string }[]>(env, ['databases', 'list']);
    assert.ok(!databases.some((d) => d.name === 'Refused'), 'nothing imported');
  });
});
