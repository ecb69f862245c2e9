// The test suites of one pass of `npm test`, run with node's test runner, the longest first. The runner's
// command line sorts the files it is given by name, and with two at a time a long suite that starts last
// holds back the end of the run; run() takes them in the order given, so this script lists them: the
// suites of LONGEST (measured, docs/performance.md "The test run") first, then the rest by name.
//
//   node scripts/run-tests.ts            the first pass: every test/**/*.test.ts (the store suites on both
//                                        dialects, the others on SQLite)
//   node scripts/run-tests.ts postgres   the PostgreSQL pass's files (scripts/test-postgres.sh): the suites
//                                        that run the service on a store, less ONE_PASS
//   node scripts/run-tests.ts --list [postgres]   prints the files, in order, and runs nothing
//   node scripts/run-tests.ts --only <file>...    runs the given files, in the order given
//
// TEST_CONCURRENCY sets how many files run at once (default 4). Most suites spend much of their time waiting
// (for a server, a timer, a child process, PostgreSQL), so on two cores four files at a time keep both busier
// than two did (docs/performance.md "The test run").
import { globSync } from 'node:fs';
import module from 'node:module';
import { relative, resolve } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

const ROOT = resolve(import.meta.dirname, '..');

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
 * The longest suites, longest first (per file, in either pass, alone and at the default concurrency; measured,
 * docs/performance.md "The test run"): they start first.
 */
const LONGEST = [
  'test/sync/sync.test.ts',
  'test/api/heavy-requests.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/api/oauth.test.ts',
  'test/sync/takeover.test.ts',
  'test/api/long-poll.test.ts',
  'test/api/production-redis.test.ts',
  'test/sync/login.test.ts',
  'test/api/production-faults.test.ts',
  'test/api/production.test.ts',
  'test/import/fuzz.test.ts',
  'test/client/wait.test.ts',
  'test/api/long-answers.test.ts',
  'test/api/oauth-throttle-redis-down.test.ts',
  'test/browser/developer-console.test.ts',
  'test/client/package.test.ts',
  'test/api/filters.test.ts',
  'test/api/replicas.test.ts',
  'test/api/feed-concurrency.test.ts',
  'test/browser/sync-login.test.ts',
  'test/api/long-poll-postgres.test.ts',
  'test/sync/takeover-writer.test.ts',
  'test/webhooks/import.test.ts',
  'test/api/oauth-throttle-two-instances.test.ts',
  'test/sync/network.test.ts',
  'test/sync/owner.test.ts',
  'test/webhooks/grant-revoked.test.ts',
  'test/api/oauth-throttle-redis.test.ts',
  'test/api/scale-out.test.ts',
  'test/browser/oauth.test.ts',
  'test/store/migrations/run.test.ts',
  'test/store/change-signals.test.ts',
  'test/webhooks/events.test.ts',
  'test/client/oauth.test.ts',
  'test/webhooks/scale-out.test.ts',
  'test/sync/steps.test.ts',
  'test/import/roundtrip.test.ts',
  'test/api/developer-console.test.ts',
  'test/api/changes.test.ts',
  'test/import/resume.test.ts',
  'test/api/oauth-throttle-process.test.ts',
  'test/api/export-load.test.ts',
  'test/api/cursors.test.ts',
];

function files(pass: 'sqlite' | 'postgres'): string[] {
  const patterns = pass === 'postgres' ? POSTGRES_PASS : ['test/**/*.test.ts'];
  const found = new Set(patterns.flatMap((pattern) => globSync(pattern, { cwd: ROOT })));
  if (pass === 'postgres') for (const file of ONE_PASS) found.delete(file);
  const first = LONGEST.filter((file) => found.has(file));
  const rest = [...found].filter((file) => !LONGEST.includes(file)).sort();
  return [...first, ...rest];
}

const args = process.argv.slice(2);
const list = args[0] === '--list';
if (list) args.shift();
let chosen: string[];
if (args[0] === '--only') chosen = args.slice(1).map((file) => resolve(file));
else if (args.length === 0 || (args.length === 1 && (args[0] === 'sqlite' || args[0] === 'postgres')))
  chosen = files(args[0] === 'postgres' ? 'postgres' : 'sqlite').map((file) => resolve(ROOT, file));
else {
  console.error('usage: node scripts/run-tests.ts [--list] [sqlite|postgres] | --only <file>...');
  process.exit(2);
}

if (list) {
  console.log(chosen.map((file) => relative(ROOT, file)).join('\n'));
} else {
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(
      `TEST_CONCURRENCY must be a whole number of at least 1, not ${process.env.TEST_CONCURRENCY}`,
    );
    process.exit(2);
  }
  // Node's compile cache, as bin/chessport.js enables it for the command: each test file runs in a process of
  // its own that loads the server's TypeScript sources, and a warm cache halves what that costs (their type
  // stripping and compilation, about 1 s of CPU per file; docs/performance.md "The test run"). The variable
  // hands it on to the test processes and, through them, to the commands and servers they start.
  const cache = module.enableCompileCache?.();
  if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
  const stream = run({ files: chosen, concurrency });
  // As the runner's command line: a failed test (not a todo) fails the run.
  stream.on('test:fail', (event) => {
    if (!event.todo) process.exitCode = 1;
  });
  // Each file's time, from the runner taking it (its process starting) to its end, for the table after the run.
  const started = new Map<string, number>();
  const took = new Map<string, number>();
  stream.on('test:dequeue', (event) => {
    if (event.file && event.name === event.file) started.set(event.file, performance.now());
  });
  stream.on('test:complete', (event) => {
    const start = event.file && event.name === event.file ? started.get(event.file) : undefined;
    if (event.file && start !== undefined) took.set(event.file, performance.now() - start);
  });
  const report = stream.compose(spec);
  report.pipe(process.stdout, { end: false });
  report.on('end', () => {
    const longest = [...took]
      .map(([file, ms]) => ({ file: relative(ROOT, file), seconds: ms / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 15);
    console.log('\n# the longest files of this run (seconds, from their start to their end)');
    for (const { file, seconds } of longest) console.log(`# ${seconds.toFixed(1).padStart(6)}  ${file}`);
  });
}
