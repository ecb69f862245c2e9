// scripts/test-pool.ts, the runner of `npm test`: files that share a process are counted file by file, a failed
// test is named with its file, and a process that ends badly without a failed test still fails its job.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runJobs, succeeded, summary } from '../../scripts/test-pool.ts';

const dir = mkdtempSync(join(tmpdir(), 'chessport-test-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// The jobs' processes are runs of their own, not this test process's children in node's test protocol.
const env = { ...process.env };
delete env.NODE_TEST_CONTEXT;

function file(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `import { test } from 'node:test';\n${body}\n`);
  return path;
}

test('two files in one process: both counted, the failed test named with its file; a crash fails its job', async () => {
  const passes = file('passes.test.mjs', "test('é ✔ fine', () => {}); test.skip('later', () => {});");
  const fails = file('fails.test.mjs', "test('broken', () => { throw new Error('no'); });");
  const crashes = file('crashes.test.mjs', "test('ends the process', () => { process.exit(3); });");
  let printed = '';
  const results = await runJobs(
    [
      { files: [passes, fails], pass: 'one', env },
      { files: [crashes], pass: 'two', env },
    ],
    2,
    dir,
    (text) => {
      printed += text;
    },
  );
  const [shared, crashed] = [
    results.find((r) => r.job.pass === 'one'),
    results.find((r) => r.job.pass === 'two'),
  ];
  assert.ok(shared && crashed);
  assert.deepEqual(
    [shared.counts.tests, shared.counts.passed, shared.counts.failed, shared.counts.skipped],
    [3, 1, 1, 1],
  );
  assert.deepEqual(
    shared.failures.map((failure) => [failure.name, failure.file]),
    [['broken', fails]],
  );
  assert.equal(succeeded(shared), false);
  assert.notEqual(crashed.code, 0);
  assert.equal(succeeded(crashed), false);
  // Each job's report whole, the characters intact; the summary names the failures and the exit code.
  assert.match(printed, /# passes\.test\.mjs fails\.test\.mjs \(one, [0-9.]+ s, exit code 1\)/);
  assert.match(printed, /é ✔ fine/);
  const text = summary(results, dir, 1);
  assert.match(text, /# one: 2 files\nℹ tests 3\n/);
  assert.match(text, /fails\.test\.mjs \(one\): broken/);
  assert.match(text, /crashes\.test\.mjs \(two\)/);
});
