// Games too large to check: one with a 100 MB comment is rejected for its size, while it is read, its first MB
// and a note of what was left out go to the rejects file, and the rest of the file imports, with the command's
// peak memory well under 1 GB (measured by the process itself: test/helpers/peak-rss.ts). --max-game-size
// (MAX_GAME_SIZE_MB) sets the limit. A line longer than it is never held whole either: a .gz of 1 MB whose
// text is a line of 1 GiB imports the games around it in a few hundred MB.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createGzip, gzipSync } from 'node:zlib';
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

const MIB = 1 << 20;
/** What a rejects file keeps of a game too large to check (docs/import.md), and the most bytes of its note. */
const KEPT = MIB;
const NOTE = 512;

/** A file of three games, the second with a comment of `mib` MiB, and what the import makes of that game. */
interface Huge {
  path: string;
  /** The second game's first MiB and more. */
  head: Buffer;
  /** The length of its text as the import reads it. */
  bytes: number;
  /** The length of its movetext line (line 13), when the comment is on one line. */
  lineBytes: number;
}

/**
 * Writes three games, the second with a comment of `mib` MiB: on one line, or wrapped into lines of 77
 * characters. Compressed, as gzip members: each MiB's is made once and written as often as needed, so that a
 * file of 1 GiB of text costs no more than one MiB's compression.
 */
async function writeHuge(
  path: string,
  mib: number,
  options: { wrapped: boolean; gz: boolean },
): Promise<Huge> {
  // "[Event "Huge"] ... 1. e4 " and "e5 2. Nf3 Nc6 1-0\n" around the comment.
  const [tags, moves] = game('Huge', '{').split('{') as [string, string];
  const line = options.wrapped ? `${'analysis '.repeat(8)}line\n` : 'analysis';
  const block = Buffer.from(line.repeat(Math.ceil(MIB / line.length)).slice(0, MIB));
  const pieces = [`${game('Before')}\n${tags}{`, block, `} ${moves}\n${game('After')}`] as const;
  const [first, member, last] = options.gz ? pieces.map((piece) => gzipSync(piece)) : pieces;
  const out = createWriteStream(path);
  out.write(first);
  for (let i = 0; i < mib; i++) if (!out.write(member)) await new Promise((r) => out.once('drain', r));
  out.end(last);
  await finished(out);
  const comment = 1 + mib * MIB + 1; // its braces
  return {
    path,
    head: Buffer.concat([Buffer.from(`${tags}{`), block]),
    // The game's text is read to the "After" game: wrapped, to the end of its last line; on one line, whose end
    // is unknown (docs/import.md), with the blank line after it too, as after an unclosed comment.
    bytes: tags.length + comment + 1 + moves.length + (options.wrapped ? 0 : 1),
    lineBytes: tags.length - tags.lastIndexOf('\n') - 1 + comment + 1 + moves.length - 1,
  };
}

/**
 * Asserts what the rejects file holds of one game too large to check, `bytes` long and starting with `head`:
 * its first MB, a note of how many bytes were left out, a blank line.
 */
function assertCut(rejects: string, head: Buffer, bytes: number): void {
  const kept = readFileSync(rejects);
  assert.ok(kept.length <= KEPT + NOTE, `rejects file of ${kept.length} bytes`);
  assert.ok(kept.subarray(0, KEPT).equals(head.subarray(0, KEPT)), 'the first MB of the game');
  assert.equal(
    kept.subarray(KEPT).toString(),
    `${head[KEPT - 1] === 0x0a ? '' : '\n'}; chessport: cut here: ${(bytes - KEPT).toLocaleString('en-US')} ` +
      'more bytes of this game are left out (a rejects file keeps the first 1 MB of a game too large to check)\n\n',
  );
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

/** Asserts the import of a file of three games whose second is too large: the others imported, in < 600 MB. */
function assertImported(summary: ImportJson['files'][number] | undefined, peakMb: number, reason: string) {
  assert.equal(summary?.imported, 2, 'the games before and after it');
  assert.equal(summary?.rejected, 1);
  assert.deepEqual(
    summary?.rejections.map(({ line, game, reason }) => [line, game, reason]),
    [[8, 2, reason]],
  );
  assert.ok(peakMb < 600, `peak RSS ${peakMb.toFixed(0)} MB`);
}

/** The reason for the game of a Huge file. */
function tooLarge(huge: Huge, wrapped: boolean): string {
  const what = wrapped
    ? `the game is ${huge.bytes.toLocaleString('en-US')} characters long`
    : `line 13 is ${huge.lineBytes.toLocaleString('en-US')} bytes long`;
  return `${what}, more than the largest game the import checks (32 MB; --max-game-size sets it)`;
}

/** Imports a rejects file again: the game cut short in it is rejected again, unchecked; nothing imported. */
async function reimport(rejects: string, database: string): Promise<void> {
  const again = await cliJson<ImportJson>(env, [
    'import',
    rejects,
    '--user',
    'alice',
    '--database',
    database,
  ]);
  assert.deepEqual(
    again.files.map((f) => [f.imported, f.rejected]),
    [[0, 1]],
  );
  assert.match(
    again.files[0]?.rejections[0]?.reason ?? '',
    /^the game was cut short in a rejects file, which kept only its first part \(its line \d+ says so\)$/,
  );
}

describe('a game too large to check', () => {
  for (const wrapped of [false, true]) {
    test(`a 100 MB comment ${wrapped ? 'over many lines' : 'on one line'}: rejected with its reason, the rest imported, its first MB in the rejects file`, async () => {
      const huge = await writeHuge(join(env.dir, `huge-${wrapped}.pgn`), 100, { wrapped, gz: false });
      const { result, peakMb } = await importMeasured([
        huge.path,
        '--user',
        'alice',
        '--database',
        `Huge ${wrapped}`,
      ]);
      assertImported(result.files[0], peakMb, tooLarge(huge, wrapped));
      assertCut(result.files[0]?.rejectsFile as string, huge.head, huge.bytes);
    });
  }

  test('a tag section of 8 million tags in a .gz: rejected, the rest imported, peak RSS under 600 MB', async () => {
    // The splitter remembers a game's tag names (a blank line and a tag repeated start a game): not millions.
    const path = join(env.dir, 'tags.pgn.gz');
    const out = createGzip({ level: 1 });
    const written = pipeline(out, createWriteStream(path));
    out.write(`${game('Before')}\n[Event "Huge"]\n`);
    let bytes = '[Event "Huge"]\n'.length;
    for (let tag = 0; tag < 8_000_000; ) {
      let chunk = '';
      for (const end = tag + 100_000; tag < end; tag++) chunk += `[T${tag} "v"]\n`;
      bytes += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end(`\n1. e4 1-0\n\n${game('After')}`);
    await written;
    const { result, peakMb } = await importMeasured([path, '--user', 'alice', '--database', 'Tags']);
    bytes += '\n1. e4 1-0\n'.length;
    assertImported(
      result.files[0],
      peakMb,
      `the game is ${bytes.toLocaleString('en-US')} characters long, more than the largest game the import checks (32 MB; --max-game-size sets it)`,
    );
  });

  test('--max-game-size and MAX_GAME_SIZE_MB set the limit; a bad value stops the command before it imports', async () => {
    const file = (await writeHuge(join(env.dir, 'two.pgn'), 2, { wrapped: true, gz: false })).path;
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

describe('a compressed file whose text is too large to hold (issue 35)', () => {
  // The files of the issue: a .gz of 1 MB whose text is a line of 1 GiB, one of 400 KB with a line of 400 MiB,
  // and one of 3.6 MB with a comment of 1 GiB over many lines.
  for (const [mib, wrapped] of [
    [1024, false],
    [400, false],
    [1024, true],
  ] as const) {
    test(`a comment of ${mib} MiB ${wrapped ? 'over many lines' : 'on one line'} in a .gz: rejected, the rest imported in < 600 MB, the first MB in the rejects file`, async () => {
      const huge = await writeHuge(join(env.dir, `huge-${mib}-${wrapped}.pgn.gz`), mib, {
        wrapped,
        gz: true,
      });
      assert.ok(statSync(huge.path).size < 4 * MIB, `${statSync(huge.path).size} bytes compressed`);
      const database = `Compressed ${mib} ${wrapped}`;
      const { result, peakMb } = await importMeasured([huge.path, '--user', 'alice', '--database', database]);
      assertImported(result.files[0], peakMb, tooLarge(huge, wrapped));
      assertCut(result.files[0]?.rejectsFile as string, huge.head, huge.bytes);
      await reimport(result.files[0]?.rejectsFile as string, `${database} again`);
    });
  }
});
