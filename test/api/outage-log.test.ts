// The outage log on its own, for what the HTTP suites cannot provoke on demand: a dependency that fails every
// other request (overloaded, one of its connections broken) must not flood the log either.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OutageLog, requests } from '../../src/api/outage-log.ts';

const WORDS = {
  down: 'store unavailable',
  more: (count: string, seconds: string) =>
    `store unavailable: ${count} more failed ${requests(count)} in the last ${seconds} s`,
  back: (seconds: string, count: string) =>
    `store available again after ${seconds} s, ${count} ${requests(count)} failed`,
};

function recorder() {
  const lines: { level: 'info' | 'warn'; details: Record<string, unknown>; message: string }[] = [];
  return {
    lines,
    info: (details: object, message: string) =>
      lines.push({ level: 'info', details: { ...details }, message }),
    warn: (details: object, message: string) =>
      lines.push({ level: 'warn', details: { ...details }, message }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('outage log', () => {
  test('a dependency that fails every other request: at most two lines per interval, every failure counted', async () => {
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 100);
    let failures = 0;
    const started = Date.now();
    while (Date.now() - started < 600) {
      outage.failed({ reason: 'busy' });
      failures++;
      await sleep(2);
      outage.succeeded();
      await sleep(2);
    }
    const elapsed = Date.now() - started;
    await sleep(250); // the last interval ends on a success: the outage ends
    assert.equal(outage.down, false);
    assert.ok(log.lines.length <= 2 * Math.ceil((elapsed + 250) / 100) + 2, `${log.lines.length} lines`);
    assert.ok(failures > 50, `${failures} failures`);
    // Each outage: its first line, its summaries, its end; all failures are in the ends' totals.
    let counted = 0;
    for (const line of log.lines) {
      if (line.message.startsWith('store available again')) counted += line.details.failed as number;
    }
    assert.equal(counted, failures);
    assert.equal(log.lines.at(-1)?.level, 'info');
  });

  test('an interval without any request says nothing; shutdown says what is still unsaid', async () => {
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 50);
    outage.failed({ reason: 'ECONNREFUSED' });
    outage.failed({ reason: 'ECONNREFUSED' });
    await sleep(80);
    assert.deepEqual(
      log.lines.map((line) => line.message),
      ['store unavailable', 'store unavailable: 1 more failed request in the last 0.1 s'],
    );
    await sleep(120); // quiet
    assert.equal(log.lines.length, 2);
    for (let i = 0; i < 1234; i++) outage.failed({});
    outage.close();
    assert.match(
      log.lines.at(-1)?.message ?? '',
      /^store unavailable: 1,234 more failed requests in the last 0\.[0-9] s$/,
    );
    assert.equal(outage.down, false);
  });

  test('the end is logged once, with how long it lasted and how many failed', async () => {
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 100);
    outage.failed({ reason: 'locked' });
    await sleep(30);
    outage.failed({});
    outage.succeeded();
    outage.succeeded();
    await sleep(150);
    assert.deepEqual(
      log.lines.map((line) => [line.level, line.message.replace(/[0-9.]+ s/, 'X s')]),
      [
        ['warn', 'store unavailable'],
        ['info', 'store available again after X s, 2 requests failed'],
      ],
    );
    const seconds = log.lines[1]?.details.outageSeconds as number;
    assert.ok(seconds >= 0 && seconds <= 0.2, `${seconds} s`);
  });
});
