// Runs test files with node's test runner, a given number of jobs at a time. A job is one file or a few of one
// pass, run in one process of their own (`node --test --test-isolation=none`), with the environment of their
// pass: the files of a job share what they load (the server's modules, the OpenAPI validators), which a process
// per file loads again each time (docs/performance.md "The test run"). A job's report (the spec reporter's) is
// held until the job ends and then printed whole, so that the reports of jobs that ran side by side do not
// interleave; the counts of each pass and the failed tests come at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/** Test files to run in one process, in a pass (its label) with the environment of that pass. */
export interface TestJob {
  files: string[];
  pass: string;
  env: NodeJS.ProcessEnv;
}

export interface Counts {
  tests: number;
  suites: number;
  passed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  todo: number;
}

/** What a job came to: its counts, its failed tests, its exit code and its wall time. */
export interface JobResult {
  job: TestJob;
  counts: Counts;
  failures: { name: string; file: string | undefined }[];
  code: number | null;
  seconds: number;
}

const ZERO: Counts = { tests: 0, suites: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0 };

/** The spec reporter's own summary at the end of a report: the pool prints one for each pass instead. */
const SPEC_SUMMARY = /(\nℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [0-9.]+)+\n*$/;

/** Runs one job and returns its result; `print` gets its whole report once it has ended. */
async function runJob(job: TestJob, root: string, print: (text: string) => void): Promise<JobResult> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'chessport-test-tally-'));
  const tallyFile = join(dir, 'tally.json');
  const args = [
    '--test',
    '--test-isolation=none',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(import.meta.dirname, 'test-tally.ts')}`,
    `--test-reporter-destination=${tallyFile}`,
    ...job.files,
  ];
  const child = spawn(process.execPath, args, { cwd: root, env: job.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let report = '';
  // Decoded as text streams: a character split between two chunks stays whole.
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      report += text;
    });
  }
  const code = await new Promise<number | null>((done) => child.on('close', done));
  let tally: { counts: Partial<Counts>; failures: JobResult['failures'] } = { counts: {}, failures: [] };
  try {
    tally = JSON.parse(readFileSync(tallyFile, 'utf8'));
  } catch {
    // No tally: the process ended before its reporter did; the exit code says it failed.
  }
  rmSync(dir, { recursive: true, force: true });
  const seconds = (performance.now() - started) / 1000;
  const exit = code === 0 ? '' : `, exit code ${code}`;
  print(
    `# ${names(job, root)} (${job.pass}, ${seconds.toFixed(1)} s${exit})\n${report.replace(SPEC_SUMMARY, '\n')}`,
  );
  return { job, counts: add(ZERO, tally.counts), failures: tally.failures, code, seconds };
}

function add(a: Counts, b: Partial<Counts>): Counts {
  const sum = { ...a };
  for (const key of Object.keys(ZERO) as (keyof Counts)[]) sum[key] += b[key] ?? 0;
  return sum;
}

/** Runs the jobs in the order given, `concurrency` at a time; resolves with every job's result. */
export async function runJobs(
  jobs: readonly TestJob[],
  concurrency: number,
  root: string,
  print: (text: string) => void,
): Promise<JobResult[]> {
  const results: JobResult[] = [];
  let next = 0;
  async function lane(): Promise<void> {
    while (next < jobs.length) {
      const job = jobs[next++] as TestJob;
      results.push(await runJob(job, root, print));
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, lane));
  return results;
}

/** Whether every test of the job passed (or was skipped or a todo), and its process ended well. */
export function succeeded(result: JobResult): boolean {
  return (
    result.code === 0 && result.failures.length === 0 && result.counts.failed + result.counts.cancelled === 0
  );
}

/** A job's files, by path from the root. */
export function names(job: TestJob, root: string): string {
  return job.files.map((file) => relative(root, file)).join(' ');
}

/** The counts of each pass, as node's runner prints its own, then the failed tests and the longest files. */
export function summary(results: readonly JobResult[], root: string, wallSeconds: number): string {
  const lines: string[] = [];
  const passes = [...new Set(results.map((result) => result.job.pass))];
  for (const pass of passes) {
    const ofPass = results.filter((result) => result.job.pass === pass);
    const counts = ofPass.reduce((sum, result) => add(sum, result.counts), { ...ZERO });
    lines.push(`# ${pass}: ${ofPass.reduce((sum, result) => sum + result.job.files.length, 0)} files`);
    lines.push(`ℹ tests ${counts.tests}`, `ℹ suites ${counts.suites}`, `ℹ pass ${counts.passed}`);
    lines.push(`ℹ fail ${counts.failed}`, `ℹ cancelled ${counts.cancelled}`, `ℹ skipped ${counts.skipped}`);
    lines.push(`ℹ todo ${counts.todo}`);
  }
  lines.push(`ℹ duration_ms ${(wallSeconds * 1000).toFixed(0)} (every pass, side by side)`);
  const failed = results.filter((result) => !succeeded(result));
  if (failed.length > 0) {
    lines.push('', '# failed:');
    for (const { job, failures, code } of failed) {
      for (const { name, file } of failures)
        lines.push(`#   ${relative(root, file ?? names(job, root))} (${job.pass}): ${name}`);
      if (failures.length === 0) lines.push(`#   ${names(job, root)} (${job.pass}): exit code ${code}`);
    }
  }
  const longest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 20);
  lines.push('', '# the longest jobs of this run (seconds, from their start to their end)');
  for (const { job, seconds } of longest)
    lines.push(`# ${seconds.toFixed(1).padStart(6)}  ${names(job, root)} (${job.pass})`);
  return `${lines.join('\n')}\n`;
}
