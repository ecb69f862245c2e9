// The import's rejects files lose nothing: a file is written only when a game is rejected, never one of the
// inputs or a file the command did not create by default, and a --rejects path it cannot honour stops the
// command before anything is imported.
// The imports run in the test's process (run: cliInProcess; a working folder of its own through its cwd, which
// the import reads through CliIo); a relative --rejects path is read from there too. cliBothWays, a child
// process beside the in-process run, checks that the real binary prints the same refusal.
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { type CliResult, cliBothWays, cliJson, type Env, FIXTURES, tempEnv } from '../helpers/harness.ts';

const MIXED = readFileSync(join(FIXTURES, 'import/mixed.pgn'), 'utf8'); // 3 games, the 2nd rejected (Ke3)
const TWO_REJECTS = `${MIXED}\n${MIXED.replace('Ke3', 'Ke4')}`; // 6 games: 2 rejected, the good ones twice
const CLEAN = MIXED.split('[Event "Illegal"]')[0] ?? ''; // its first game

type ImportJson = { files: { file: string; rejected: number; rejectsFile: string | null }[] };

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

/** A fresh folder in the test's working folder, with these files in it. */
function folder(name: string, files: Record<string, string>): string {
  const dir = join(env.dir, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

async function databaseSlugs(): Promise<string[]> {
  return (await cliJson<{ slug: string }[]>(env, ['databases', 'list', '--user', 'alice'])).map(
    (d) => d.slug,
  );
}

/** Exit 1 with one line on stderr that matches, no stack trace, and no database made. */
async function refused(
  args: string[],
  message: RegExp,
  runner: (env: Env, args: string[]) => Promise<CliResult> = run,
): Promise<void> {
  const before = await databaseSlugs();
  const result = await runner(env, args);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /^chessport: [^\n]+\n$/);
  assert.match(result.stderr, message);
  assert.deepEqual(await databaseSlugs(), before, 'no database created');
}

describe('--rejects', () => {
  test('a clean import leaves an existing file of that name as it was', async () => {
    const dir = folder('clean', { 'notes.txt': 'my notes\n', 'good.pgn': CLEAN });
    const result = await cliJson<ImportJson>(env, [
      'import',
      join(dir, 'good.pgn'),
      '--user',
      'alice',
      '--database',
      'Clean',
      '--rejects',
      join(dir, 'notes.txt'),
    ]);
    assert.deepEqual(
      result.files.map((f) => [f.rejected, f.rejectsFile]),
      [[0, null]],
    );
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'my notes\n');
  });

  test('one of the inputs, also through a link, is refused and stays as it was', async () => {
    const dir = folder('input', { 'games.pgn': MIXED, 'other.pgn': MIXED });
    symlinkSync(join(dir, 'games.pgn'), join(dir, 'link.pgn'));
    for (const rejects of [join(dir, 'games.pgn'), join(dir, 'link.pgn'), 'input/../input/games.pgn']) {
      await refused(
        [
          'import',
          join(dir, 'other.pgn'),
          join(dir, 'games.pgn'),
          '--user',
          'alice',
          '--database',
          'Input',
          '--rejects',
          rejects,
        ],
        /one of the inputs/,
        rejects === join(dir, 'games.pgn') ? cliBothWays : run,
      );
    }
    assert.equal(readFileSync(join(dir, 'games.pgn'), 'utf8'), MIXED);
  });

  test('a folder, a path in a missing folder or an empty name is refused before anything is imported', async () => {
    const dir = folder('where', { 'games.pgn': MIXED });
    const input = join(dir, 'games.pgn');
    const base = ['import', input, '--user', 'alice', '--database', 'Where', '--rejects'];
    await refused([...base, env.dir], /is a folder/);
    await refused([...base, `${dir}/`], /names a folder/);
    await refused([...base, '/nonexistent-dir/r.pgn'], /folder \/nonexistent-dir does not exist/);
    await refused([...base, ''], /needs a name/);
    assert.ok(!existsSync(join(env.dir, 'r.pgn')), 'no fallback to the working folder');
    assert.ok(!existsSync(`${input}.rejected.pgn`));
  });

  test('a file of the store is refused', async () => {
    if (env.dialect !== 'sqlite') return;
    const dir = folder('store', { 'games.pgn': MIXED });
    const base = ['import', join(dir, 'games.pgn'), '--user', 'alice', '--database', 'Store', '--rejects'];
    await refused([...base, env.databaseUrl], /is a file of the store/);
    await refused([...base, `${env.databaseUrl}-wal`], /is a file of the store/);
  });

  test('the first write of the command replaces the file, the later ones add to it', async () => {
    const dir = folder('collect', {
      'clean.pgn': CLEAN,
      'one.pgn': MIXED,
      'two.pgn': MIXED.replace('Ke3', 'Ke4'),
      'all.rejected.pgn': '[Event "from an older run"]\n\n*\n',
    });
    const rejects = join(dir, 'all.rejected.pgn');
    const files = ['clean.pgn', 'one.pgn', 'two.pgn'].map((f) => join(dir, f));
    const args = ['import', ...files, '--user', 'alice', '--database', 'Collect', '--rejects', rejects];
    const result = await cliJson<ImportJson>(env, args);
    assert.deepEqual(
      result.files.map((f) => f.rejectsFile),
      [null, rejects, rejects],
    );
    const text = readFileSync(rejects, 'utf8');
    assert.ok(text.includes('Ke3') && text.includes('Ke4') && !text.includes('older run'), text);
  });

  test('a file that cannot take the rejected games (a full disk): the import stops naming it; run again, it completes', {
    skip: existsSync('/dev/full') ? false : 'no /dev/full (a device on which every write fails: disk full)',
  }, async () => {
    const dir = folder('full', { 'games.pgn': TWO_REJECTS });
    const args = ['import', join(dir, 'games.pgn'), '--user', 'alice', '--database', 'Full'];
    // Node's "ENOSPC: no space left on device, write" alone named no file, and came with the hint for bugs.
    const result = await run(env, [...args, '--rejects', '/dev/full']);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /^chessport: \S*games\.pgn: the import stopped after (\d+) games were imported \(and \d+ duplicates skipped\): cannot write the rejected games to \/dev\/full \(ENOSPC: no space left on device\); free space there \(or name another file with --rejects\), then run the command again: the games already stored are skipped\n$/,
    );
    const rejects = join(dir, 'games.rejects.pgn');
    type Counted = { files: { imported: number; rejected: number; rejectsFile: string | null }[] };
    const again = await cliJson<Counted>(env, [...args, '--rejects', rejects]);
    assert.deepEqual(
      again.files.map((f) => [f.imported, f.rejected, f.rejectsFile]),
      [[0, 2, rejects]],
    );
    assert.ok(readFileSync(rejects, 'utf8').includes('Ke4'));
  });
});

describe('default rejects files', () => {
  test('inputs of one name in read-only folders: each its own file in the working folder, none overwritten', async () => {
    const ro1 = folder('ro1', { 'games.pgn': MIXED });
    const ro2 = folder('ro2', { 'games.pgn': TWO_REJECTS });
    const unrelated = '[Event "not this command\'s"]\n\n*\n';
    writeFileSync(join(env.dir, 'games.pgn.rejected.pgn'), unrelated);
    chmodSync(ro1, 0o555);
    chmodSync(ro2, 0o555);
    try {
      const result = await cliJson<ImportJson>(env, [
        'import',
        join(ro1, 'games.pgn'),
        join(ro2, 'games.pgn'),
        '--user',
        'alice',
        '--database',
        'Read only',
      ]);
      const [first, second] = result.files;
      assert.equal(first?.rejectsFile, join(env.dir, 'games.pgn.rejected-2.pgn'));
      assert.equal(second?.rejectsFile, join(env.dir, 'games.pgn.rejected-3.pgn'));
      assert.equal(readFileSync(join(env.dir, 'games.pgn.rejected.pgn'), 'utf8'), unrelated);
      const games = (file: string) => readFileSync(file, 'utf8').match(/\[Event /g)?.length;
      assert.equal(games(first?.rejectsFile ?? ''), 1);
      assert.equal(games(second?.rejectsFile ?? ''), 2);
      const text = await run(env, [
        'import',
        join(ro2, 'games.pgn'),
        '--user',
        'alice',
        '--database',
        'Read only',
      ]);
      assert.match(
        text.stdout,
        new RegExp(`rejected games written to ${env.dir}/games\\.pgn\\.rejected-4\\.pgn`),
      );
    } finally {
      chmodSync(ro1, 0o755);
      chmodSync(ro2, 0o755);
    }
  });

  test('a read-only input folder and a read-only working folder: refused before anything is imported', async () => {
    const ro = folder('ro3', { 'games.pgn': MIXED });
    const cwd = folder('ro-cwd', {});
    chmodSync(ro, 0o555);
    chmodSync(cwd, 0o555);
    try {
      const before = await databaseSlugs();
      const result = await run(
        env,
        ['import', join(ro, 'games.pgn'), '--user', 'alice', '--database', 'RO'],
        { cwd },
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^chessport: .*neither is writable: name a file with --rejects\n$/);
      assert.deepEqual(await databaseSlugs(), before);
    } finally {
      chmodSync(ro, 0o755);
      chmodSync(cwd, 0o755);
    }
  });

  test('an input named like another input’s rejects file is never written', async () => {
    const dir = folder('named', { 'a.pgn': MIXED, 'a.pgn.rejected.pgn': TWO_REJECTS });
    const result = await cliJson<ImportJson>(env, [
      'import',
      join(dir, 'a.pgn'),
      join(dir, 'a.pgn.rejected.pgn'),
      '--user',
      'alice',
      '--database',
      'Named',
    ]);
    assert.equal(readFileSync(join(dir, 'a.pgn.rejected.pgn'), 'utf8'), TWO_REJECTS);
    assert.deepEqual(
      result.files.map((f) => [f.rejected, f.rejectsFile]),
      [
        [1, join(dir, 'a.pgn.rejected-2.pgn')],
        [2, join(dir, 'a.pgn.rejected.pgn.rejected.pgn')],
      ],
    );
  });

  test('an older rejects file beside the input is replaced when the input has rejects again', async () => {
    const dir = folder('again', { 'g.pgn': MIXED, 'g.pgn.rejected.pgn': 'older\n' });
    await cliJson(env, ['import', join(dir, 'g.pgn'), '--user', 'alice', '--database', 'Again']);
    const text = readFileSync(join(dir, 'g.pgn.rejected.pgn'), 'utf8');
    assert.ok(text.includes('Ke3') && !text.includes('older'), text);
  });

  test('an older rejects file that is a link to another file is replaced, never written through', async () => {
    // Whoever may write into an upload folder puts a hard link there, named as the rejects file of a PGN file
    // the operator will import, to a file of the operator's: the rejected games, text that anyone may have
    // written, went into that file.
    const home = folder('home', { authorized_keys: 'ssh-ed25519 AAAA operator\n' });
    const keys = join(home, 'authorized_keys');
    const dir = folder('upload', { 'g.pgn': MIXED });
    linkSync(keys, join(dir, 'g.pgn.rejected.pgn'));
    const result = await cliJson<ImportJson>(env, [
      'import',
      join(dir, 'g.pgn'),
      '--user',
      'alice',
      '--database',
      'Upload',
    ]);
    assert.equal(readFileSync(keys, 'utf8'), 'ssh-ed25519 AAAA operator\n');
    assert.equal(statSync(keys).nlink, 1);
    assert.deepEqual(
      result.files.map((f) => f.rejectsFile),
      [join(dir, 'g.pgn.rejected.pgn')],
    );
    assert.match(readFileSync(join(dir, 'g.pgn.rejected.pgn'), 'utf8'), /Ke3/);
  });
});
