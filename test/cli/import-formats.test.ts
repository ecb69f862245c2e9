// What an import is given that is no PGN text. A binary file (the node executable, a zip or xz file) was
// read as "games", each rejected into a rejects file larger than the input, and the command exited 0; a
// .pgn.gz file likewise. Now a gzip- or zstd-compressed PGN file is read decompressed, and anything else that is not
// text is refused by its first bytes: before anything is written for a file, at its start for a pipe.
// The imports of files run in the test's process (run: cliInProcess). Child processes stay for the imports
// through a pipe (piped: `cat | chessport import /dev/stdin`, the process's own standard input) and for
// cliBothWays, which checks that the real binary prints the same help and refusal as the in-process run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { BIN, cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { writeGames } from '../helpers/production.ts';
import { queryStore } from '../helpers/stores.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

type Summary = {
  file: string;
  bytes: number;
  games: number;
  imported: number;
  duplicates: number;
  rejected: number;
};
type Document = { files: Summary[]; stopped?: { file: string; error: string } };

async function databaseSlugs(): Promise<string[]> {
  return (await cliJson<{ slug: string }[]>(env, ['databases', 'list'])).map((d) => d.slug);
}

async function gamesOf(slug: string): Promise<number> {
  const [row] = await queryStore<{ n: number }>(
    env.databaseUrl,
    `select cast(count(*) as integer) as n from games g join databases d on d.id = g.database_id where d.slug = '${slug}'`,
  );
  return row?.n ?? 0;
}

/** `chessport import /dev/stdin ...` reading `input` through a pipe (Node's own stdin pipes are sockets). */
function piped(input: Buffer, database: string, json = false) {
  const source = join(env.dir, 'piped.input');
  writeFileSync(source, input);
  const args = [
    'import',
    '/dev/stdin',
    '--user',
    'alice',
    '--database',
    database,
    ...(json ? ['--json'] : []),
  ];
  const command = ['sh', '-c', 'cat "$0" | "$@"', source, process.execPath, BIN, ...args];
  const run = spawnSync(command[0] as string, command.slice(1), {
    env: env.env,
    cwd: env.dir,
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function rejectsFiles(): string[] {
  return readdirSync(env.dir).filter((f) => f.includes('.rejected'));
}

describe('refused by their first bytes, before anything is written', () => {
  const refusals: [string, Buffer, RegExp][] = [
    [
      'a zip archive',
      Buffer.from('PK\x03\x04\x14\x00\x00\x00games.pgn', 'latin1'),
      /is a zip archive: extract the PGN files from it/,
    ],
    [
      'an xz file',
      Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(64, 7)]),
      /is xz-compressed: decompress it \(unxz\), or pipe it: xzcat \S+ \| chessport import \/dev\/stdin \.\.\./,
    ],
    [
      'a bzip2 file',
      Buffer.from('BZh91AY&SY\x01\x02\x03', 'latin1'),
      /is bzip2-compressed: decompress it \(bunzip2\)/,
    ],
    [
      'a damaged zstd file',
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4]),
      /is zstd-compressed, but cannot be decompressed/,
    ],
    [
      'a zstd file of a binary one',
      zstdCompressSync(Buffer.alloc(4096, 0)),
      /is not PGN text once decompressed: 4096 of its first 4096 bytes are control characters/,
    ],
    [
      'a gzip file holding a zstd one',
      gzipSync(zstdCompressSync(Buffer.from('[Result "*"]\n\n*\n'))),
      /holds zstd-compressed: decompress it first \(unzstd\)/,
    ],
    [
      'UTF-16 text',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('[Event "x"]\n', 'utf16le')]),
      /is UTF-16 text: convert it to UTF-8 \(iconv -f UTF-16 -t UTF-8\)/,
    ],
    [
      'a gzip file of a binary one',
      gzipSync(Buffer.alloc(4096, 0)),
      /is not PGN text once decompressed: 4096 of its first 4096 bytes are control characters \(NUL and the like\), as in binary files/,
    ],
    [
      'a damaged gzip file',
      Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff]),
      /is gzip-compressed, but cannot be decompressed/,
    ],
  ];
  for (const [what, bytes, message] of refusals) {
    test(what, async () => {
      const file = join(env.dir, `${what.replaceAll(' ', '-')}.pgn`);
      writeFileSync(file, bytes);
      const result = await run(env, [
        'import',
        CLASSICS_PGN,
        file,
        '--user',
        'alice',
        '--database',
        'refused',
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^chessport: [^\n]+\n$/);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '', 'the good file before it was not imported either');
    });
  }

  test('a binary file (the node executable): refused by its first bytes, and no rejects file', async () => {
    const args = ['import', process.execPath, '--user', 'alice', '--database', 'refused'];
    const result = await cliBothWays(env, args);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^chessport: \S+: is not PGN text: \d+ of its first 8192 bytes are control characters \(NUL and the like\), as in binary files\n$/,
    );
    assert.ok(!(await databaseSlugs()).includes('refused'));
    assert.deepEqual(rejectsFiles(), []);
  });

  test('through a pipe: at its start, before any game is stored', async () => {
    const result = piped(readFileSync(process.execPath).subarray(0, 1 << 20), 'piped-binary');
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^chessport: \/dev\/stdin: is not PGN text: \d+ of its first 8192 bytes are control characters \(NUL and the like\), as in binary files\n$/,
    );
    assert.equal(await gamesOf('piped-binary'), 0);
    assert.deepEqual(rejectsFiles(), []);
  });
});

test('a stray NUL in a PGN file is no binary file: it rejects its game alone', async () => {
  const file = join(env.dir, 'stray.pgn');
  writeFileSync(
    file,
    `[White "A\u0000"]\n[Result "1-0"]\n\n1. e4 1-0\n\n[White "B"]\n[Result "1-0"]\n\n1. d4 1-0\n`,
  );
  const [summary] = (await cliJson<Document>(env, ['import', file, '--user', 'alice', '--database', 'stray']))
    .files;
  assert.deepEqual([summary?.imported, summary?.rejected], [1, 1]);
});

describe('gzip-compressed PGN is read decompressed', () => {
  test('a .pgn.gz file, a concatenated one, and one through a pipe: the games of the text', async () => {
    const plain = writeGames(env.dir, 'plain.pgn', 3000, 'Gz');
    const text = readFileSync(plain);
    const gz = join(env.dir, 'games.pgn.gz');
    writeFileSync(gz, gzipSync(text));
    const [whole] = (await cliJson<Document>(env, ['import', gz, '--user', 'alice', '--database', 'gz']))
      .files;
    assert.deepEqual([whole?.games, whole?.imported, whole?.rejected], [3000, 3000, 0]);
    // gzip files joined (cat a.gz b.gz) are one stream of members, as gzip reads them.
    const halves = join(env.dir, 'halves.pgn.gz');
    const cut = text.indexOf('\n[Event ', text.length >> 1) + 1;
    writeFileSync(halves, Buffer.concat([gzipSync(text.subarray(0, cut)), gzipSync(text.subarray(cut))]));
    const [joined] = (await cliJson<Document>(env, ['import', halves, '--user', 'alice', '--database', 'gz']))
      .files;
    assert.deepEqual([joined?.games, joined?.duplicates], [3000, 3000]);
    const fromPipe = piped(gzipSync(text), 'gz', true);
    assert.equal(fromPipe.code, 0, fromPipe.stderr);
    assert.equal((JSON.parse(fromPipe.stdout) as Document).files[0]?.duplicates, 3000);
  });

  test('one cut off: the games before the cut are imported; with --json the document says where it stopped', async () => {
    const first = writeGames(env.dir, 'before-cut.pgn', 10, 'Before');
    const text = readFileSync(writeGames(env.dir, 'cut.pgn', 12_000, 'Cut'));
    const whole = gzipSync(text);
    const cut = join(env.dir, 'cut.pgn.gz');
    writeFileSync(cut, whole.subarray(0, whole.length >> 1));
    const result = await run(env, ['import', first, cut, '--user', 'alice', '--database', 'cut', '--json']);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^chessport: \S*cut\.pgn\.gz: the import stopped after (\d+) games were imported: its gzip data is damaged or cut off \(unexpected end of file\)\n$/,
    );
    const document = JSON.parse(result.stdout) as Document;
    assert.equal(document.stopped?.file, cut);
    assert.deepEqual(
      document.files.map((f) => [f.file, f.imported]),
      [
        [first, 10],
        [cut, Number(/after (\d+) games/.exec(result.stderr)?.[1])],
      ],
    );
    const imported = document.files[1]?.imported ?? 0;
    assert.ok(imported > 4000 && imported < 12_000, `about half: ${imported}`);
    assert.equal(await gamesOf('cut'), 10 + imported);
    assert.ok(
      !existsSync(`${cut}.rejected.pgn`),
      'the game cut in two is not rejected: it was not read whole',
    );
  });
});

describe('zstd-compressed PGN (lichess publishes .pgn.zst) is read decompressed', () => {
  test('a .pgn.zst file, concatenated frames, and one through a pipe: the games of the text', async () => {
    const text = readFileSync(writeGames(env.dir, 'plain-zst.pgn', 3000, 'Zst'));
    const zst = join(env.dir, 'games.pgn.zst');
    writeFileSync(zst, zstdCompressSync(text));
    const [whole] = (await cliJson<Document>(env, ['import', zst, '--user', 'alice', '--database', 'zst']))
      .files;
    assert.deepEqual([whole?.games, whole?.imported, whole?.rejected], [3000, 3000, 0]);
    assert.equal(whole?.bytes, readFileSync(zst).length, 'its bytes are the compressed ones');
    const halves = join(env.dir, 'halves.pgn.zst');
    const cut = text.indexOf('\n[Event ', text.length >> 1) + 1;
    writeFileSync(
      halves,
      Buffer.concat([zstdCompressSync(text.subarray(0, cut)), zstdCompressSync(text.subarray(cut))]),
    );
    const [joined] = (
      await cliJson<Document>(env, ['import', halves, '--user', 'alice', '--database', 'zst'])
    ).files;
    assert.deepEqual([joined?.games, joined?.duplicates], [3000, 3000]);
    const fromPipe = piped(zstdCompressSync(text), 'zst', true);
    assert.equal(fromPipe.code, 0, fromPipe.stderr);
    assert.equal((JSON.parse(fromPipe.stdout) as Document).files[0]?.duplicates, 3000);
  });

  test('the help says so, as it says gzip (it named gzip alone)', async () => {
    for (const args of [['--help'], ['import', '--help']]) {
      const help = await (args.length === 1 ? run : cliBothWays)(env, args);
      assert.equal(help.code, 0);
      assert.match(help.stdout.replace(/\s+/g, ' '), /gzip- or zstd-compressed/, args.join(' '));
    }
  });

  for (const [what, damage, reason] of [
    ['cut off', (whole: Buffer) => whole.subarray(0, whole.length >> 1), /unexpected end of file/],
    [
      'damaged halfway',
      (whole: Buffer) => {
        const damaged = Buffer.from(whole);
        damaged.fill(0x55, whole.length >> 1, (whole.length >> 1) + 64);
        return damaged;
      },
      /\S/,
    ],
  ] as const) {
    test(`one ${what}: the games before the damage are imported, then the command fails naming the file`, async () => {
      const text = readFileSync(writeGames(env.dir, 'cut-zst.pgn', 12_000, 'CutZst'));
      const file = join(env.dir, `${what.replaceAll(' ', '-')}.pgn.zst`);
      writeFileSync(file, damage(zstdCompressSync(text)));
      const database = `zst-${what.replaceAll(' ', '-')}`;
      const result = await run(env, ['import', file, '--user', 'alice', '--database', database, '--json']);
      assert.equal(result.code, 1);
      const stopped = new RegExp(
        `^chessport: ${file.replaceAll('.', '\\.')}: the import stopped after (\\d+) games were imported: its zstd data is damaged or cut off \\((.+)\\)\n$`,
      ).exec(result.stderr);
      assert.ok(stopped, result.stderr);
      assert.match(stopped[2] ?? '', reason);
      const imported = Number(stopped[1]);
      assert.ok(imported > 4000 && imported < 12_000, `about half: ${imported}`);
      assert.equal((JSON.parse(result.stdout) as Document).files[0]?.imported, imported);
      assert.equal(await gamesOf(database), imported);
    });
  }
});
