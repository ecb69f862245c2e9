// The test suites of `npm test`, every pass side by side: the first pass (every test/**/*.test.ts, the store
// suites on both dialects, the others on SQLite), the PostgreSQL pass (the suites that run the service on a
// store, once more on PostgreSQL: CHESSPORT_TEST_STORE=postgres, each test store a fresh database on
// TEST_POSTGRES_URL) and that pass's pooled part (a few of its suites once more through a PgBouncer in
// transaction mode). The files of all the passes share one queue of jobs, the longest first (LONGEST, measured),
// so that no pass ends on a long file alone; the files past LONGEST run a few to a process (GROUP_SIZE).
//
//   node scripts/run-tests.ts                 every pass (the PostgreSQL ones where TEST_POSTGRES_URL is set,
//                                             the pooled part where pgbouncer is installed too)
//   node scripts/run-tests.ts sqlite|postgres one pass (postgres: with its pooled part)
//   node scripts/run-tests.ts --list [...]    prints the jobs (their files), in order, with their pass; runs nothing
//   node scripts/run-tests.ts --only <file>...  runs the given files, each in a process of its own, in the order
//                                             given, in the environment it is given (CHESSPORT_TEST_STORE=postgres
//                                             for the PostgreSQL pass)
//
// TEST_CONCURRENCY sets how many jobs (a file, or a few files in one process: scripts/test-pool.ts) run at once
// (default 4): most suites spend much of their time waiting, so on two cores four at a time keep both busy
// (docs/performance.md "The test run").
import { globSync } from 'node:fs';
import module from 'node:module';
import { resolve } from 'node:path';
import { PGBOUNCER, PGBOUNCER_SKIP, type PgBouncer, startPgBouncer } from '../test/helpers/pgbouncer.ts';
import { names, runJobs, succeeded, summary, type TestJob } from './test-pool.ts';

const ROOT = resolve(import.meta.dirname, '..');

type Pass = 'sqlite' | 'postgres' | 'pgbouncer';

const LABELS: Record<Pass, string> = {
  sqlite: 'the first pass (SQLite)',
  postgres: 'the PostgreSQL pass',
  pgbouncer: 'the PostgreSQL pass through PgBouncer',
};

/** The folders of the PostgreSQL pass: the API, the CLI's commands on a store, the import and the webhooks. */
const POSTGRES_PASS = [
  'test/api/*.test.ts',
  'test/cli/cli.test.ts',
  'test/import/*.test.ts',
  'test/webhooks/*.test.ts',
];

/**
 * Suites of the PostgreSQL pass's folders that use no store of the pass: they run in the first pass only, as a
 * second run would check the same thing again.
 */
const ONE_PASS = new Set([
  // A PostgreSQL cluster of its own (test/helpers/pg-cluster.ts), whatever the pass; its two SQLite cases set
  // their store themselves.
  'test/api/replicas.test.ts',
  // No store at all: the parts alone.
  'test/api/leases.test.ts',
  'test/api/outage-log.test.ts',
  'test/import/decode.test.ts',
  'test/import/normalize-batch.test.ts',
  'test/import/text-size.test.ts',
  'test/import/zstd-frames.test.ts',
  'test/webhooks/address.test.ts',
  'test/webhooks/parts.test.ts',
]);

/**
 * The suites of the PostgreSQL pass that run once more through a PgBouncer in transaction mode (4 server
 * connections per database; docs/operations.md "Behind a pooler"): the servers and the CLI reach each test
 * store through it with PG_POOL_MODE=transaction, their LISTEN connection directly (test/helpers/stores.ts).
 * The feed's reads (its games imported by the CLI), long-polls woken across two instances through their
 * direct LISTEN, webhooks delivered by two instances. test/api/pooler.test.ts runs a PgBouncer of its own.
 */
const POOLED = [
  'test/api/long-poll-postgres.test.ts',
  'test/api/changes.test.ts',
  'test/webhooks/scale-out.test.ts',
];

/**
 * The longest files of every pass and their seconds (wall time at the default concurrency, every pass side by
 * side; docs/performance.md "The test run"): each runs in a process of its own, and the queue starts the
 * longest jobs first, so that none starts last and ends the run alone.
 */
const LONGEST: Record<string, number> = {
  'postgres test/webhooks/delivery.test.ts': 56,
  'sqlite test/webhooks/delivery.test.ts': 53,
  'postgres test/api/heavy-requests.test.ts': 39,
  'sqlite test/sync/takeover.test.ts': 38,
  'postgres test/api/production-faults.test.ts': 34,
  'sqlite test/api/heavy-requests.test.ts': 33,
  'postgres test/api/production-redis.test.ts': 27,
  'sqlite test/sync/login.test.ts': 26,
  'postgres test/api/long-answers.test.ts': 26,
  'postgres test/import/roundtrip.test.ts': 25,
  'sqlite test/api/production-redis.test.ts': 24,
  'sqlite test/sync/sync.test.ts': 24,
  'postgres test/api/long-poll.test.ts': 24,
  'sqlite test/import/game-size.test.ts': 22,
  'postgres test/webhooks/import.test.ts': 22,
  'postgres test/api/filters.test.ts': 22,
  'sqlite test/browser/sync-login.test.ts': 21,
  'postgres test/import/fuzz.test.ts': 21,
  'postgres test/api/long-poll-postgres.test.ts': 21,
  'pgbouncer test/api/long-poll-postgres.test.ts': 21,
  'postgres test/api/export-load.test.ts': 19,
  'postgres test/api/oauth-throttle-redis-down.test.ts': 19,
  'sqlite test/import/roundtrip.test.ts': 18,
  'sqlite test/api/oauth-throttle-redis-down.test.ts': 18,
  'sqlite test/api/long-answers.test.ts': 16,
  'sqlite test/api/export-load.test.ts': 16,
  'sqlite test/api/replicas.test.ts': 16,
  'sqlite test/client/package.test.ts': 15,
  'postgres test/api/oauth-throttle-process.test.ts': 13,
  'postgres test/import/resume.test.ts': 13,
  'postgres test/webhooks/scale-out.test.ts': 13,
  'sqlite test/api/filters.test.ts': 12,
};

/** A file's seconds where LONGEST does not name it: the mean of the other files of its pass, measured so. */
const USUAL_SECONDS: Record<Pass, number> = { sqlite: 5.5, postgres: 8.5, pgbouncer: 7 };

/** The files of a pass, by path from the root. */
function filesOf(pass: Pass): string[] {
  if (pass === 'pgbouncer') return POOLED;
  const patterns = pass === 'postgres' ? POSTGRES_PASS : ['test/**/*.test.ts'];
  const found = new Set(patterns.flatMap((pattern) => globSync(pattern, { cwd: ROOT })));
  if (pass === 'postgres') for (const file of ONE_PASS) found.delete(file);
  return [...found].sort();
}

/** The environment of a pass's test processes. */
function envOf(pass: Pass, pooledUrl: string | null): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CHESSPORT_TEST_STORE;
  delete env.TEST_PGBOUNCER_URL;
  if (pass !== 'sqlite') env.CHESSPORT_TEST_STORE = 'postgres';
  if (pass === 'pgbouncer' && pooledUrl) env.TEST_PGBOUNCER_URL = pooledUrl;
  return env;
}

/**
 * How many files of a pass share a process, past LONGEST: enough that what each process loads is loaded once
 * for several files, few enough that no job runs much longer than the longest files.
 */
const GROUP_SIZE = 6;

/**
 * Every pass's jobs in one queue: the files of LONGEST each alone, the rest of each pass by name, GROUP_SIZE
 * files to a job (files of one folder side by side, as they load the same modules); the longest jobs first.
 */
function queue(passes: readonly Pass[], pooledUrl: string | null): TestJob[] {
  const jobs: { job: TestJob; seconds: number }[] = [];
  const add = (pass: Pass, files: string[], seconds: number) =>
    jobs.push({
      job: {
        files: files.map((file) => resolve(ROOT, file)),
        pass: LABELS[pass],
        env: envOf(pass, pooledUrl),
      },
      seconds,
    });
  for (const pass of passes) {
    const rest: string[] = [];
    for (const file of filesOf(pass)) {
      const seconds = LONGEST[`${pass} ${file}`];
      if (seconds === undefined) rest.push(file);
      else add(pass, [file], seconds);
    }
    for (let at = 0; at < rest.length; at += GROUP_SIZE) {
      const files = rest.slice(at, at + GROUP_SIZE);
      add(pass, files, files.length * USUAL_SECONDS[pass]);
    }
  }
  return jobs.sort((a, b) => b.seconds - a.seconds).map(({ job }) => job);
}

function usage(): never {
  console.error('usage: node scripts/run-tests.ts [--list] [sqlite|postgres] | --only <file>...');
  process.exit(2);
}

/** The passes asked for, less those this machine cannot run (each said, as the suites that skip say it). */
function passesOf(asked: string | undefined, note: (line: string) => void): Pass[] {
  if (asked !== undefined && asked !== 'sqlite' && asked !== 'postgres') usage();
  const passes: Pass[] = asked === 'postgres' ? [] : ['sqlite'];
  if (asked === 'sqlite') return passes;
  const postgres = process.env.TEST_POSTGRES_URL;
  if (!postgres) {
    note(
      '# SKIP the PostgreSQL pass: TEST_POSTGRES_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test); ' +
        'the API, CLI-command and import suites ran on SQLite only',
    );
    return passes;
  }
  passes.push('postgres');
  if (PGBOUNCER) passes.push('pgbouncer');
  else note(`# SKIP the PgBouncer part of the PostgreSQL pass: ${PGBOUNCER_SKIP}`);
  return passes;
}

const args = process.argv.slice(2);
const list = args[0] === '--list';
if (list) args.shift();
if (args[0] !== '--only' && args.length > 1) usage();
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 4);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`TEST_CONCURRENCY must be a whole number of at least 1, not ${process.env.TEST_CONCURRENCY}`);
  process.exit(2);
}
// Node's compile cache, as bin/chessport.js enables it for the command: each job runs in a process of its own
// that loads the server's TypeScript sources, and a warm cache halves what that costs (their type stripping
// and compilation, about 1 s of CPU a process; docs/performance.md "The test run"). The variable hands it on
// to the test processes (their environments copy this one's) and, through them, to the commands and servers
// they start.
const cache = module.enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;

if (args[0] === '--only') {
  const jobs = args
    .slice(1)
    .map((file) => ({ files: [resolve(file)], pass: 'as given', env: { ...process.env } }));
  await runAll(jobs, [], null);
} else {
  const notes: string[] = [];
  const passes = passesOf(args[0], (line) => notes.push(line));
  if (list) for (const job of queue(passes, null)) console.log(`${names(job, ROOT)}  (${job.pass})`);
  else {
    // The pooled part's PgBouncer (test/helpers/pgbouncer.ts), stopped once the run has ended.
    const postgres = process.env.TEST_POSTGRES_URL as string;
    const bouncer = passes.includes('pgbouncer') ? await startPgBouncer(postgres) : null;
    await runAll(queue(passes, bouncer?.pooled(postgres) ?? null), notes, bouncer);
  }
}

/** Runs the jobs and prints the summary; a failed or cancelled test (not a todo), or a test process that failed, fails the run, as node's command line does. */
async function runAll(jobs: TestJob[], notes: readonly string[], bouncer: PgBouncer | null): Promise<void> {
  for (const line of notes) console.log(line);
  const started = performance.now();
  try {
    const results = await runJobs(jobs, concurrency, ROOT, (text) => process.stdout.write(text));
    process.stdout.write(`\n${summary(results, ROOT, (performance.now() - started) / 1000)}`);
    if (!results.every(succeeded)) process.exitCode = 1;
  } finally {
    await bouncer?.stop();
  }
}
