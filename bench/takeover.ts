// The take-over: another system takes a user's games over through the API. `chessport sync` of a fresh mirror
// (the recommended pattern: one NDJSON export of /games, one snapshot, then the feed from its X-Changes-Cursor)
// against the database's PGN export, the same games in the same run, at the server's DEFAULT rate limit:
// games/s of both and their ratio (issue 36's target: the sync at 0.5x the export's games/s or better). The
// NDJSON export alone, read and parsed without writing anything, is measured too: what the sync costs on top
// of its download is the mirror's writes.
// The games: the first 100,000 of pgnmentor_players_A-J.pgn (real games), one user, one database, imported
// through the CLI with duplicates kept, so that every one of them is a game of the database.
// On a loopback address the sync asks for uncompressed answers, as the export is read here; a last pair of
// runs has both compressed (gzip), as across a network.
// Usage: node bench/takeover.ts [--games N] [--runs N]   (default 100000 games, 2 runs of each)
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PgnSplitter } from '../src/chess/index.ts';
import { CORPUS } from '../test/helpers/corpus.ts';
import { exportRun, freePort, rssMb, stop, waitUntilUp } from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/chessport.js');
const SOURCE = join(CORPUS, 'large/pgnmentor_players_A-J.pgn');
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const GAMES = arg('--games', 100_000);
const RUNS = arg('--runs', 2);
const run = promisify(execFile);
const SCOPES = 'user.read,games.read,databases.read';

/** The first `count` games of the source, byte for byte (latin1 in, latin1 out), into `file`. */
async function firstGames(file: string, count: number): Promise<number> {
  const fd = openSync(file, 'w');
  const splitter = new PgnSplitter();
  let written = 0;
  try {
    for await (const chunk of createReadStream(SOURCE, { encoding: 'latin1', highWaterMark: 1 << 20 })) {
      for (const game of splitter.push(chunk as string)) {
        writeSync(fd, `${game.text}\n\n`, null, 'latin1');
        if (++written === count) return written;
      }
    }
    for (const game of splitter.end()) {
      writeSync(fd, `${game.text}\n\n`, null, 'latin1');
      if (++written === count) return written;
    }
    return written;
  } finally {
    closeSync(fd);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-takeover-'));
// The default rate limit: RATE_LIMIT_MAX and RATE_LIMIT_WINDOW unset, whatever this shell has.
const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: join(dir, 'store.sqlite'), LOG_LEVEL: 'warn' };
delete env.RATE_LIMIT_MAX;
delete env.RATE_LIMIT_WINDOW;
delete env.REDIS_URL;
const cli = async (...args: string[]) =>
  JSON.parse((await run(process.execPath, [BIN, ...args, '--json'], { env, maxBuffer: 64 << 20 })).stdout);

let server: ChildProcess | undefined;
try {
  const pgn = join(dir, 'games.pgn');
  const taken = await firstGames(pgn, GAMES);
  await cli('users', 'add', 'bench');
  await cli('apps', 'add', 'bench');
  const started = performance.now();
  const imported = await cli('import', pgn, '--user', 'bench', '--database', 'Bench', '--allow-duplicates');
  const database = imported.database as { id: string; slug: string };
  const { games } = (await cli('databases', 'list')).find((db: { id: string }) => db.id === database.id) as {
    games: number;
  };
  console.log(
    `imported ${games} of the first ${taken} games of ${SOURCE.split('/').at(-1)} in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s (duplicates kept; the rest rejected)`,
  );
  const { token } = await cli('tokens', 'issue', '--user', 'bench', '--app', 'bench', '--scopes', SCOPES);

  const port = await freePort();
  server = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}` };
  await waitUntilUp(`${base}/api/v1/me`, headers);
  const limit = (await fetch(`${base}/api/v1/me`, { headers })).headers.get('x-ratelimit-limit');

  const rows: { name: string; seconds: number; detail: string }[] = [];
  const exportUrl = `${base}/api/v1/databases/${database.id}/games?format=pgn`;
  const pid = server.pid as number;
  const exportOnce = async (name: string, encoding: 'identity' | 'gzip') => {
    const exported = await exportRun(exportUrl, { ...headers, 'accept-encoding': encoding }, pid);
    rows.push({
      name,
      seconds: exported.seconds,
      detail: `${(exported.bytes / 1e6).toFixed(0)} MB sent, server RSS peak ${exported.peak.toFixed(0)} MB`,
    });
  };
  const ndjsonOnce = async (name: string) => {
    const started = performance.now();
    const answer = await fetch(`${base}/api/v1/games?format=ndjson`, {
      headers: { ...headers, 'accept-encoding': 'identity' },
    });
    if (!answer.ok || !answer.body) throw new Error(`the NDJSON export answered ${answer.status}`);
    let held = '';
    let parsed = 0;
    let bytes = 0;
    for await (const chunk of answer.body.pipeThrough(new TextDecoderStream())) {
      bytes += chunk.length;
      held += chunk;
      let start = 0;
      for (let end = held.indexOf('\n'); end !== -1; end = held.indexOf('\n', start)) {
        JSON.parse(held.slice(start, end));
        parsed++;
        start = end + 1;
      }
      held = held.slice(start);
    }
    if (parsed !== games) throw new Error(`the NDJSON export held ${parsed} of ${games} games`);
    rows.push({
      name,
      seconds: (performance.now() - started) / 1000,
      detail: `${(bytes / 1e6).toFixed(0)} MB read and parsed, nothing written`,
    });
  };
  let apps = 0;
  const syncOnce = async (name: string, extra: string[]) => {
    // A token of an app of its own: the rate limit counts per app and user, and each run is a first
    // take-over.
    const app = `takeover-${++apps}`;
    await cli('apps', 'add', app);
    const { token } = await cli('tokens', 'issue', '--user', 'bench', '--app', app, '--scopes', SCOPES);
    const out = join(dir, 'mirror');
    const before = rssMb(pid);
    const started = performance.now();
    const { stdout } = await run(
      process.execPath,
      [BIN, 'sync', '--base-url', base, '--out', out, '--json', ...extra],
      { env: { ...env, CHESSPORT_TOKEN: token }, maxBuffer: 16 << 20 },
    );
    const seconds = (performance.now() - started) / 1000;
    const summary = JSON.parse(stdout) as {
      pages: number;
      mirrorGames: number;
      exportedGames: number;
      rateLimitWaits: number;
      detailRequests: number;
    };
    if (summary.mirrorGames !== games)
      throw new Error(`the mirror holds ${summary.mirrorGames} of ${games} games`);
    rows.push({
      name,
      seconds,
      detail:
        `${summary.exportedGames} games from the export, ${summary.pages} feed pages, ` +
        `${summary.detailRequests} detail requests, ${summary.rateLimitWaits} 429s, ` +
        `server RSS ${before.toFixed(0)} -> ${rssMb(pid).toFixed(0)} MB`,
    });
    rmSync(out, { recursive: true, force: true });
  };
  // The sync's default on a loopback address: uncompressed answers, as the export is read here.
  for (let i = 1; i <= RUNS; i++) {
    await exportOnce(`PGN export ${i}`, 'identity');
    await syncOnce(`chessport sync ${i}`, []);
  }
  await ndjsonOnce('NDJSON export only');
  // Across a network the sync asks for gzip: both compressed, once.
  await exportOnce('PGN export, gzip', 'gzip');
  await syncOnce('sync, gzip', ['--compression', 'on']);

  const load = loadavg()[0]?.toFixed(1);
  console.log(
    `\nThe take-over of ${games} games, one user, one database, rate limit ${limit} per window ` +
      `(load average ${load} on ${availableParallelism()} cores)\n`,
  );
  console.log(`${'run'.padEnd(18)} ${'seconds'.padStart(8)} ${'games/s'.padStart(9)}  detail`);
  for (const row of rows) {
    const rate = (games / row.seconds).toFixed(0);
    console.log(
      `${row.name.padEnd(18)} ${row.seconds.toFixed(2).padStart(8)} ${rate.padStart(9)}  ${row.detail}`,
    );
  }
  const best = (prefix: string) =>
    Math.min(...rows.filter((row) => row.name.startsWith(prefix)).map((row) => row.seconds));
  const sync = best('chessport sync');
  const exported = best('PGN export ');
  console.log(
    `\nbest of ${RUNS}: sync ${sync.toFixed(2)} s (${(games / sync).toFixed(0)} games/s), export ` +
      `${exported.toFixed(2)} s (${(games / exported).toFixed(0)} games/s): the sync at ` +
      `${(exported / sync).toFixed(2)}x the export's games/s; gzip'd both: ` +
      `${(best('PGN export, gzip') / best('sync, gzip')).toFixed(2)}x`,
  );
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
