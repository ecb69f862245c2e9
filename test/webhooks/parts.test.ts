// The parts of a delivery: its signature (checked with svix, the receivers' library, not with ours), the
// coalescing and retry schedules, and one HTTP attempt against real receivers (status, redirects, a capped
// answer, a timeout).
import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { Webhook } from 'svix';
import { newWebhookSecret } from '../../src/store/webhook-endpoints.ts';
import { eventBody } from '../../src/webhooks/payload.ts';
import { coalescingRule, DEFAULT_RETRY_SCHEDULE_MS, retryAt } from '../../src/webhooks/schedule.ts';
import { createSender } from '../../src/webhooks/send.ts';
import { signatureHeader } from '../../src/webhooks/signature.ts';

function headers(secrets: string[], id: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, id, timestamp, body),
  };
}

async function receiver(handler: RequestListener): Promise<{ url: string; close(): void }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('signatures', () => {
  test('svix verifies a delivery signed with the endpoint secret; a changed body or another secret fails', () => {
    const secret = newWebhookSecret();
    const body = eventBody('5a0c3b62-5bb6-8f5e-9d1c-1b0f6f2b9a10', Date.UTC(2024, 4, 6, 12));
    assert.equal(
      body,
      '{"type":"changes.available","timestamp":"2024-05-06T12:00:00.000Z","data":{"user":"5a0c3b62-5bb6-8f5e-9d1c-1b0f6f2b9a10"}}',
    );
    const signed = headers([secret], 'msg_1', body);
    assert.match(signed['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
    new Webhook(secret).verify(body, signed);
    assert.throws(() => new Webhook(secret).verify(body.replace('changes', 'change'), signed));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, signed));
    // svix refuses a timestamp more than five minutes off: the header carries the attempt's time.
    assert.throws(() => new Webhook(secret).verify(body, headers([secret], 'msg_1', body, 1_000_000_000)));
  });

  test('during a rotation the header carries a signature per secret, and either secret verifies', () => {
    const [next, old] = [newWebhookSecret(), newWebhookSecret()];
    const body = eventBody('u', 0);
    const signed = headers([next, old], 'msg_2', body);
    assert.equal(signed['webhook-signature'].split(' ').length, 2);
    new Webhook(next).verify(body, signed);
    new Webhook(old).verify(body, signed);
  });
});

describe('schedules', () => {
  const rule = coalescingRule({ baseMs: 1000, maxMs: 8000, burstChanges: 100 });

  test('coalescing: at once after a quiet spell; a spacing after a recent delivery, doubling while bursts come', () => {
    const now = 1_000_000;
    assert.deepEqual(rule(undefined, now), { dueAt: now, spacingMs: 0 }, 'the first delivery goes at once');
    assert.deepEqual(rule({ sentAt: now - 5000, spacingMs: 0, changes: 1 }, now), {
      dueAt: now,
      spacingMs: 0,
    });
    assert.deepEqual(rule({ sentAt: now - 300, spacingMs: 0, changes: 1 }, now), {
      dueAt: now + 700,
      spacingMs: 1000,
    });
    assert.deepEqual(
      rule({ sentAt: now - 300, spacingMs: 1000, changes: 3 }, now),
      { dueAt: now + 700, spacingMs: 1000 },
      'a few changes: the spacing stays short',
    );
    assert.deepEqual(rule({ sentAt: now - 300, spacingMs: 0, changes: 5000 }, now), {
      dueAt: now + 700,
      spacingMs: 1000,
    });
    assert.deepEqual(rule({ sentAt: now - 300, spacingMs: 2000, changes: 5000 }, now), {
      dueAt: now + 3700,
      spacingMs: 4000,
    });
    assert.deepEqual(
      rule({ sentAt: now - 300, spacingMs: 8000, changes: 5000 }, now),
      { dueAt: now + 7700, spacingMs: 8000 },
      'at most maxMs',
    );
    assert.deepEqual(
      rule({ sentAt: now - 9000, spacingMs: 4000, changes: 5000 }, now),
      { dueAt: now, spacingMs: 0 },
      'quiet for a spacing: starts over',
    );
    assert.deepEqual(rule({ sentAt: null, spacingMs: 0, changes: 1 }, now), { dueAt: now, spacingMs: 0 });
  });

  /** Deliveries of an import whose batches of 5,000 changes commit every `everyMs` for `forMs`, each sent when due. */
  function importDeliveries(everyMs: number, forMs: number): number {
    const policy = coalescingRule();
    let previous: { sentAt: number; spacingMs: number; changes: number } | undefined;
    let pending: { dueAt: number; spacingMs: number; changes: number } | undefined;
    let deliveries = 0;
    for (let at = 0; at <= forMs + 120_000; at += 100) {
      if (pending && pending.dueAt <= at) {
        previous = { sentAt: at, spacingMs: pending.spacingMs, changes: pending.changes };
        pending = undefined;
        deliveries++;
      }
      if (at > forMs || at % everyMs !== 0) continue;
      if (pending) pending.changes += 5000;
      else pending = { ...policy(previous, at), changes: 5000 };
    }
    assert.equal(pending, undefined, 'the last change delivered');
    return deliveries;
  }

  test('coalescing: an import of many batches gives a handful of deliveries, however far apart they commit', () => {
    // Five minutes of a batch every 100 ms; 46 s of one every 2.2 s (slower than the first spacings: a busy
    // machine, PostgreSQL); a batch every 30 s for five minutes.
    for (const [everyMs, forMs] of [
      [100, 300_000],
      [2200, 46_200],
      [30_000, 300_000],
    ] as const) {
      const deliveries = importDeliveries(everyMs, forMs);
      assert.ok(deliveries <= 12, `a batch every ${everyMs} ms for ${forMs} ms: ${deliveries} deliveries`);
    }
  });

  test('coalescing: after a burst, a change later than the spacing but within maxMs goes at once, the spacing doubled', () => {
    const now = 1_000_000;
    assert.deepEqual(rule({ sentAt: now - 5000, spacingMs: 2000, changes: 5000 }, now), {
      dueAt: now,
      spacingMs: 4000,
    });
    assert.deepEqual(
      rule({ sentAt: now - 3000, spacingMs: 1000, changes: 3 }, now),
      { dueAt: now, spacingMs: 0 },
      'a few changes: a quiet spell of the spacing starts over',
    );
  });

  test('retries: the schedule’s waits with up to 10% jitter, then none', () => {
    assert.equal(DEFAULT_RETRY_SCHEDULE_MS.length, 11, 'twelve attempts in all');
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    assert.ok(total > 2.9 * 86_400_000 && total < 3 * 86_400_000, 'about three days');
    assert.equal(
      retryAt([5000, 60_000], 1, 0, () => 0.5),
      5000,
    );
    assert.equal(
      retryAt([5000, 60_000], 1, 0, () => 0),
      4500,
    );
    assert.equal(
      retryAt([5000, 60_000], 2, 0, () => 1),
      66_000,
    );
    assert.equal(retryAt([5000, 60_000], 3, 0), null, 'after the last wait: given up');
  });
});

describe('one attempt', () => {
  const sender = createSender({ allowPrivate: true, timeoutMs: 500 });
  after(() => sender.close());

  test('2xx is delivered; any other status fails with what the receiver said, briefly', async () => {
    const seen: { method?: string; type?: string; body: string }[] = [];
    const r = await receiver((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ method: req.method, type: req.headers['content-type'], body });
        if (req.url === '/ok') res.writeHead(202).end();
        else res.writeHead(503).end(`busy${'!'.repeat(500)}`);
      });
    });
    try {
      assert.deepEqual(await sender.send(`${r.url}/ok`, { 'webhook-id': 'x' }, '{"a":1}'), {
        outcome: 'delivered',
        status: 202,
        error: '',
      });
      const failed = await sender.send(`${r.url}/busy`, {}, '{}');
      assert.equal(failed.outcome, 'http_error');
      assert.equal(failed.status, 503);
      assert.equal(failed.error, `HTTP 503: busy${'!'.repeat(196)}`);
      assert.deepEqual(seen[0], { method: 'POST', type: 'application/json', body: '{"a":1}' });
    } finally {
      r.close();
    }
  });

  test('a redirect is not followed: it is a failed attempt', async () => {
    let followed = false;
    const r = await receiver((req, res) => {
      if (req.url === '/elsewhere') followed = true;
      res.writeHead(307, { location: '/elsewhere' }).end();
    });
    try {
      const result = await sender.send(`${r.url}/hook`, {}, '{}');
      assert.deepEqual([result.outcome, result.status], ['http_error', 307]);
      assert.equal(followed, false);
    } finally {
      r.close();
    }
  });

  test('a receiver that answers without end is read up to a cap; one that does not answer times out', async () => {
    const r = await receiver((req, res) => {
      req.resume();
      if (req.url === '/silent') return;
      res.writeHead(500);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const timer = setInterval(() => res.write(chunk), 1);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const endless = await sender.send(`${r.url}/endless`, {}, '{}');
      assert.deepEqual([endless.outcome, endless.status], ['http_error', 500]);
      assert.equal(endless.error, `HTTP 500: ${'x'.repeat(200)}`);
      const silent = await sender.send(`${r.url}/silent`, {}, '{}');
      assert.deepEqual(silent, { outcome: 'timeout', status: null, error: 'no answer within 0.5 s' });
      const refused = await sender.send('http://127.0.0.1:1/', {}, '{}');
      assert.equal(refused.outcome, 'network_error');
      assert.match(refused.error, /^ECONNREFUSED/);
    } finally {
      r.close();
    }
  });
});
