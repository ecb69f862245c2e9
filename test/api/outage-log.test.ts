// The outage log on its own, for what the HTTP suites cannot provoke on demand: a dependency that fails every
// other request (overloaded, one of its connections broken) must not flood the log either.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { OutageLog, requests } from '../../src/platform/outage-log.ts';

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

/**
 * The clock (Date.now()) and the log's interval timer, mocked: `advance(ms)` moves time on a millisecond at a
 * time, each timer firing at its own time, so that what the log says depends on the order of events only,
 * not on how busy the machine is.
 */
function mockClock(t: TestContext): (ms: number) => void {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
  return (ms: number) => {
    for (let i = 0; i < ms; i++) t.mock.timers.tick(1);
  };
}

describe('outage log', () => {
  test('a dependency that fails every other request: at most two lines per interval, every failure counted', (t) => {
    const advance = mockClock(t);
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 100);
    let failures = 0;
    for (let elapsed = 0; elapsed < 600; elapsed += 4) {
      outage.failed({ reason: 'busy' });
      failures++;
      advance(2);
      outage.succeeded();
      advance(2);
    }
    advance(250); // the last interval ends on a success: the outage ends
    assert.equal(outage.down, false);
    assert.ok(log.lines.length <= 2 * Math.ceil((600 + 250) / 100) + 2, `${log.lines.length} lines`);
    assert.equal(failures, 150);
    // Each outage: its first line, its summaries, its end; all failures are in the ends' totals.
    let counted = 0;
    for (const line of log.lines) {
      if (line.message.startsWith('store available again')) counted += line.details.failed as number;
    }
    assert.equal(counted, failures);
    assert.equal(log.lines.at(-1)?.level, 'info');
  });

  test('an interval without any request says nothing; shutdown says what is still unsaid', (t) => {
    const advance = mockClock(t);
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 50);
    outage.failed({ reason: 'ECONNREFUSED' });
    outage.failed({ reason: 'ECONNREFUSED' });
    advance(80);
    assert.deepEqual(
      log.lines.map((line) => line.message),
      ['store unavailable', 'store unavailable: 1 more failed request in the last 0.1 s'],
    );
    advance(120); // quiet
    assert.equal(log.lines.length, 2);
    for (let i = 0; i < 1234; i++) outage.failed({});
    outage.close();
    // From the last line (at 50 ms) to the close (at 200 ms).
    assert.equal(
      log.lines.at(-1)?.message,
      'store unavailable: 1,234 more failed requests in the last 0.2 s',
    );
    assert.equal(outage.down, false);
  });

  test('the end is logged once, with how long it lasted and how many failed', (t) => {
    const advance = mockClock(t);
    const log = recorder();
    const outage = new OutageLog(log, WORDS, 1000);
    outage.failed({ reason: 'locked' });
    advance(300);
    outage.failed({});
    outage.succeeded();
    outage.succeeded();
    advance(1500);
    assert.deepEqual(
      log.lines.map((line) => [line.level, line.message]),
      [
        ['warn', 'store unavailable'],
        ['info', 'store available again after 0.3 s, 2 requests failed'],
      ],
    );
    assert.equal(log.lines[1]?.details.outageSeconds, 0.3);
  });
});
