// What one hostile token costs everyone else: another user's GET /me latency (p99) and the time of their own
// PGN export, on an idle server and while one token tries to hold 40 whole-database exports (100,000 games)
// at once, all in one run. The same attack on a server without the heavy-request limits shows what they save.
// Usage: node bench/abuse.ts [--games N] [--victim-games N] [--seconds S] [--rounds R] [--unlimited 0|1]
//   (defaults: 100000 games in the attacked database, 20000 in the victim's, 10 s of /me per phase, 3 rounds)
//
// /me is asked open-loop, every 20 ms whatever the answers (a slow answer does not hide the ones behind it);
// the victim's export is read as fast as this process can, three times per phase (the median is reported).
// The attacker runs in a process of its own and reads its exports as fast as it can. Two attackers: one
// retries a refused export after its Retry-After, as a client does; a hostile one after 100 ms, which spends
// its request budget (the rate limit at its default) within seconds. Each phase has tokens of apps of its own
// (budgets and slots of their own). Each round runs idle, then both attacks, so that a machine whose load
// changes during the run weighs on all phases alike.
// Where taskset is, the server runs on CPU 0 and the clients (the attacker, and this process for the victim)
// on the others, as clients on other machines would: an attacker that reads 100 MB/s takes a core to do it.
// Target: /me p99 and the victim's export at most 3x idle under attack (medians over the rounds).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, type GameRecord, openStore } from '../src/store/index.ts';
import { freePort, percentile, sampleRecords, stop, waitUntilUp } from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const GAMES = arg('--games', 100_000);
const VICTIM_GAMES = arg('--victim-games', 20_000);
const SECONDS = arg('--seconds', 10);
const ROUNDS = arg('--rounds', 3);
const UNLIMITED = arg('--unlimited', 1) === 1;
/** How long the attackers wait before retrying a refused export (ms): their Retry-After, or 100 ms. */
const POLITE = 5000;
const HOSTILE = 100;
const ATTACKERS = 40;

interface Tokens {
  /** Tokens of the attacker and of the victim, of an app of their own for each phase: take one a phase. */
  attacker: string[];
  victim: string[];
}

/** Phases in a run, each with tokens of its own. */
const PHASES = 3 * ROUNDS + 2;

/** The store: the attacker's database of GAMES games, the victim's of VICTIM_GAMES, their tokens. */
async function fill(databaseUrl: string): Promise<{ tokens: Tokens; attacked: Database; own: Database }> {
  const store = await openStore(databaseUrl);
  const records = await sampleRecords(500);
  const fillOne = async (login: string, games: number) => {
    const user = await store.accounts.addUser({ login });
    const database = await store.databases.add({ ownerId: user.id, name: `${login} games` });
    for (let done = 0; done < games; done += 5000) {
      const batch = Array.from(
        { length: Math.min(5000, games - done) },
        (_, i) => records[(done + i) % records.length] as GameRecord,
      );
      await store.games.insert(database, batch, true);
    }
    return { user, database };
  };
  const attacker = await fillOne('attacker', GAMES);
  const victim = await fillOne('victim', VICTIM_GAMES);
  const scopes = ['user.read', 'databases.read', 'games.read'];
  const issue = async (userId: string, name: string) => {
    const app = await store.accounts.addApp({ name });
    return (await store.tokens.issue({ userId, appId: app.id, scopes, expiresAt: null })).token;
  };
  const tokens: Tokens = { attacker: [], victim: [] };
  for (let i = 0; i < PHASES; i++) {
    tokens.attacker.push(await issue(attacker.user.id, `attacker app ${i}`));
    tokens.victim.push(await issue(victim.user.id, `victim app ${i}`));
  }
  await store.close();
  return { tokens, attacked: attacker.database, own: victim.database };
}

/**
 * How to start a process on some CPUs (`taskset -c`), when the machine has more than one and taskset is
 * there: the server on CPU 0, the clients on the others.
 */
const CPUS = availableParallelism();
const HAS_TASKSET = CPUS > 1 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
function pinned(cpus: string, args: string[]): [string, string[]] {
  return HAS_TASKSET ? ['taskset', ['-c', cpus, process.execPath, ...args]] : [process.execPath, args];
}
const SERVER_CPUS = '0';
const CLIENT_CPUS = `1-${CPUS - 1}`;

async function serve(
  databaseUrl: string,
  extra: Record<string, string>,
): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const [command, args] = pinned(SERVER_CPUS, [
    join(ROOT, 'bin/chessport.js'),
    'serve',
    '--port',
    String(port),
  ]);
  const child = spawn(command, args, {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...extra },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${base}/healthz`);
  return { child, base };
}

/** One GET read to its end: its status, how long it took (ms), and the body of an answer other than 200. */
function timed(url: string, token: string): Promise<{ status: number; ms: number; error?: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    get(url, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      let error = '';
      res.on('data', (chunk: Buffer) => {
        if (res.statusCode !== 200) error += chunk.toString();
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, ...(error && { error }) }),
      );
      res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    }).on('error', () => resolve({ status: 0, ms: performance.now() - started }));
  });
}

/** /me every 20 ms for SECONDS, whatever the answers: the latencies, sorted. */
async function meLatencies(base: string, token: string): Promise<number[]> {
  const asked: Promise<{ status: number; ms: number }>[] = [];
  const until = performance.now() + SECONDS * 1000;
  while (performance.now() < until) {
    asked.push(timed(`${base}/api/v1/me`, token));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const answers = await Promise.all(asked);
  const failed = answers.filter((a) => a.status !== 200).length;
  if (failed > 0) console.log(`  (${failed} of ${answers.length} /me answers were not 200!)`);
  return answers.map((a) => a.ms).sort((a, b) => a - b);
}

/**
 * The victim's own export, three times: the median time in ms, from the first ask to the last byte. A refusal
 * (503: the server sheds load) is retried after its Retry-After, as a client does, and counted.
 */
async function ownExport(
  base: string,
  token: string,
  own: Database,
): Promise<{ ms: number; refused: number }> {
  const times: number[] = [];
  let refused = 0;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    for (;;) {
      const run = await timed(`${base}/api/v1/databases/${own.slug}/games?format=pgn`, token);
      if (run.status === 200) break;
      if (run.status !== 503) throw new Error(`the victim's export: ${run.status} ${run.error ?? ''}`);
      refused++;
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
    times.push(performance.now() - started);
  }
  return { ms: times.sort((a, b) => a - b)[1] as number, refused };
}

/** The server's event-loop delay since the last scrape, from /metrics (prom-client): mean and max in ms. */
async function eventLoop(base: string): Promise<{ mean: number; max: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000;
  return { mean: read('nodejs_eventloop_lag_mean_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

type Counts = { exports: number; refused: number; failed: number };

/**
 * The attacker, in a process of its own (this file with --attack URL TOKEN): reading exports as fast as it
 * can takes a core, and the victim's latencies must not be this process's own. ATTACKERS loops, each holding
 * an export as long as it can; on SIGTERM it prints its counts.
 */
async function attacker(url: string, token: string, retryMs: number): Promise<void> {
  let running = true;
  const counts: Counts = { exports: 0, refused: 0, failed: 0 };
  process.once('SIGTERM', () => {
    running = false;
  });
  const loops = Array.from({ length: ATTACKERS }, async () => {
    while (running) {
      const { status } = await timed(url, token);
      if (status === 200) counts.exports++;
      else if (status === 429 || status === 503) counts.refused++;
      else counts.failed++;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  });
  await Promise.all(loops);
  process.stdout.write(JSON.stringify(counts));
}

function attack(base: string, token: string, attacked: Database, retryMs: number) {
  const url = `${base}/api/v1/databases/${attacked.slug}/games?format=pgn`;
  const [command, args] = pinned(CLIENT_CPUS, [
    import.meta.filename,
    '--attack',
    url,
    token,
    String(retryMs),
  ]);
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    async stop(): Promise<Counts> {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(output) as Counts;
    },
  };
}

interface Phase {
  name: string;
  me: number[];
  exportMs: number;
  /** The victim's exports refused (503) and retried. */
  exportRefused: number;
  loop: { mean: number; max: number };
  attack?: Counts;
}

async function phase(
  name: string,
  base: string,
  victim: string,
  own: Database,
  attacker?: { token: string; attacked: Database; retryMs: number },
): Promise<Phase> {
  const running = attacker && attack(base, attacker.token, attacker.attacked, attacker.retryMs);
  if (running) await new Promise((resolve) => setTimeout(resolve, 2000)); // every loop has asked once
  await eventLoop(base); // the delay is measured from here
  const me = await meLatencies(base, victim);
  const { ms: exportMs, refused } = await ownExport(base, victim, own);
  const loop = await eventLoop(base);
  const counts = await running?.stop();
  return { name, me, exportMs, exportRefused: refused, loop, ...(counts && { attack: counts }) };
}

if (process.argv[2] === '--attack') {
  await attacker(process.argv[3] as string, process.argv[4] as string, Number(process.argv[5]));
  process.exit(0);
}

// This process measures the victim: on the clients' CPUs.
if (HAS_TASKSET) spawnSync('taskset', ['-pc', CLIENT_CPUS, String(process.pid)], { stdio: 'ignore' });

const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-abuse-'));
const databaseUrl = join(dir, 'store.sqlite');
let server: ChildProcess | undefined;
try {
  const { tokens, attacked, own } = await fill(databaseUrl);
  const phases: Phase[] = [];
  let next = 0;
  /** The victim's token of the next phase, and the attacker's (`retryMs`: how it retries). */
  const victim = () => tokens.victim[next] as string;
  const by = (retryMs: number) => ({ token: tokens.attacker[next] as string, attacked, retryMs });
  const run = async (name: string, base: string, attack?: number) => {
    phases.push(await phase(name, base, victim(), own, attack === undefined ? undefined : by(attack)));
    next++;
  };
  const limited = await serve(databaseUrl, {});
  server = limited.child;
  await ownExport(limited.base, tokens.victim.at(-1) as string, own); // warm-up
  for (let round = 1; round <= ROUNDS; round++) {
    await run('idle', limited.base);
    await run('attack, retrying after 5 s', limited.base, POLITE);
    await run('attack, retrying after 0.1 s', limited.base, HOSTILE);
  }
  await stop(server);
  if (UNLIMITED) {
    const open = await serve(databaseUrl, {
      EXPORTS_PER_CLIENT: String(ATTACKERS),
      EXPORTS_PER_INSTANCE: String(ATTACKERS + 1),
      SHED_EVENT_LOOP_DELAY_MS: '0',
      SHED_HEAP_PERCENT: '0',
    });
    server = open.child;
    await ownExport(open.base, tokens.victim.at(-1) as string, own); // warm-up
    await run('limits off: idle', open.base);
    await run('limits off: attack, 5 s', open.base, POLITE);
  }

  console.log(
    `\nOne token trying ${ATTACKERS} exports at once of ${GAMES} games; another user's /me every 20 ms for ` +
      `${SECONDS} s, then their own export of ${VICTIM_GAMES} games (median of 3); ${ROUNDS} rounds; ` +
      `${HAS_TASKSET ? `server on CPU ${SERVER_CPUS}, clients on ${CLIENT_CPUS}` : 'no CPU pinning'}\n`,
  );
  const width = 32;
  console.log(
    `${'phase'.padEnd(width)} ${'/me p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'x idle'.padStart(7)} ${'export s'.padStart(9)} ${'x idle'.padStart(7)} ${'loop mean/max ms'.padStart(17)}  attacker`,
  );
  let idle = phases[0] as Phase;
  const ratios = new Map<string, { me: number[]; export: number[] }>();
  for (const p of phases) {
    if (p.name.endsWith('idle')) idle = p;
    const p99 = percentile(p.me, 99);
    const meRatio = p99 / percentile(idle.me, 99);
    const exportRatio = p.exportMs / idle.exportMs;
    if (p.attack) {
      const seen = ratios.get(p.name) ?? { me: [], export: [] };
      seen.me.push(meRatio);
      seen.export.push(exportRatio);
      ratios.set(p.name, seen);
    }
    const attackText = p.attack
      ? `${p.attack.exports} exports done, ${p.attack.refused} refused${p.attack.failed ? `, ${p.attack.failed} failed` : ''}`
      : '';
    console.log(
      `${p.name.padEnd(width)} ${percentile(p.me, 50).toFixed(1).padStart(8)} ${p99.toFixed(1).padStart(8)} ${(p.me.at(-1) ?? 0).toFixed(0).padStart(8)} ${meRatio.toFixed(1).padStart(7)} ${(p.exportMs / 1000).toFixed(2).padStart(9)} ${exportRatio.toFixed(1).padStart(7)} ${`${p.loop.mean.toFixed(0)}/${p.loop.max.toFixed(0)}`.padStart(17)}  ${attackText}${p.exportRefused ? `; the victim's export refused ${p.exportRefused}x (503)` : ''}`,
    );
  }
  // The middle value; of an even count, the higher of the two in the middle.
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  console.log('');
  for (const [name, seen] of ratios) {
    if (name.startsWith('limits off')) continue;
    const me = median(seen.me);
    const exported = median(seen.export);
    console.log(
      `target (${name}): /me p99 and the victim's export at most 3x idle: ${me <= 3 && exported <= 3 ? 'met' : 'NOT met'} ` +
        `(medians over ${seen.me.length} rounds: /me p99 ${me.toFixed(1)}x, export ${exported.toFixed(1)}x)`,
    );
  }
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
