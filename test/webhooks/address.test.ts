// Where a webhook may go (src/platform/webhook-address.ts): https at public addresses, in every form an address takes,
// checked on the URL and on what a name resolves to at the moment of the delivery (DNS rebinding).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  checkEndpointUrl,
  guardedLookup,
  notPublic,
  RefusedAddress,
  type Resolve,
  resolvePublic,
} from '../../src/platform/webhook-address.ts';
import { createSender } from '../../src/webhooks/send.ts';

const NOT_PUBLIC = [
  ['127.0.0.1', 'a loopback address'],
  ['127.255.0.9', 'a loopback address'],
  ['10.0.0.1', 'a private address'],
  ['172.16.5.4', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['169.254.169.254', 'a link-local address (169.254.169.254 is the cloud metadata service)'],
  ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
  ['100.100.100.200', 'a shared (carrier-grade NAT) address'],
  ['0.0.0.0', 'the unspecified address'],
  ['255.255.255.255', 'the broadcast address'],
  ['224.0.0.1', 'a multicast address'],
  ['198.18.0.1', 'a reserved address (reserved)'],
  ['::1', 'a loopback address'],
  ['::', 'the unspecified address'],
  ['::ffff:127.0.0.1', 'a loopback address'],
  ['::ffff:7f00:1', 'a loopback address'],
  ['::ffff:169.254.169.254', 'a link-local address (169.254.169.254 is the cloud metadata service)'],
  ['fc00::1', 'a private (unique local) address'],
  ['fd00:ec2::254', 'a private (unique local) address'],
  ['fe80::1', 'a link-local address (169.254.169.254 is the cloud metadata service)'],
  ['ff02::1', 'a multicast address'],
  ['64:ff9b::7f00:1', 'a reserved address (rfc6052)'],
  ['2002:7f00:1::1', 'a reserved address (6to4)'],
  // IPv4-compatible (::a.b.c.d): judged as the IPv4 address, as the mapped ones are.
  ['::7f00:1', 'a loopback address'],
  ['::a9fe:a9fe', 'a link-local address (169.254.169.254 is the cloud metadata service)'],
  ['::10.0.0.1', 'a private address'],
] as const;

describe('addresses', () => {
  test('only global unicast addresses are public, in their IPv4 and IPv6 forms', () => {
    for (const [address, why] of NOT_PUBLIC) assert.equal(notPublic(address), why, address);
    for (const address of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(notPublic(address), undefined, address);
    }
  });

  test('an endpoint URL: https at a public host; every form of a private address the URL parser reads is refused', () => {
    assert.equal(
      checkEndpointUrl('https://hooks.example.org/in?x=1', false).href,
      'https://hooks.example.org/in?x=1',
    );
    assert.equal(checkEndpointUrl('https://8.8.8.8:8443/', false).host, '8.8.8.8:8443');
    const refused = (url: string, pattern: RegExp) =>
      assert.throws(
        () => checkEndpointUrl(url, false),
        (error: unknown) => {
          assert.ok(error instanceof RefusedAddress);
          assert.match(error.message, pattern, url);
          return true;
        },
      );
    for (const url of [
      'https://127.0.0.1/',
      'https://2130706433/', // 127.0.0.1 in decimal
      'https://0x7f.0.0.1/', // hexadecimal
      'https://017700000001/', // octal
      'https://127.1/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::127.0.0.1]/', // IPv4-compatible
    ]) {
      refused(url, /is a loopback address, not a public one \(WEBHOOK_ALLOW_PRIVATE=1 allows it/);
    }
    refused('https://10.0.0.1/', /10\.0\.0\.1 is a private address/);
    refused('https://169.254.169.254/latest/meta-data/', /cloud metadata/);
    refused('https://[fd00:ec2::254]/', /unique local/);
    refused('https://[fe80::1]/', /link-local/);
    refused('https://100.64.0.1/', /carrier-grade NAT/);
    refused('https://0/', /0\.0\.0\.0 is the unspecified address/);
    refused('https://[::]/', /unspecified/);
    refused('http://hooks.example.org/', /must be https, not http \(http: WEBHOOK_ALLOW_PRIVATE=1 allows it/);
    refused('ftp://hooks.example.org/', /must be https, not ftp$/);
    refused('https://user:pass@hooks.example.org/', /user name or password/);
    refused('https://hooks.example.org/#x', /fragment/);
    refused('hooks.example.org', /is not a URL/);
    refused(`https://example.org/${'x'.repeat(2048)}`, /longer than 2048/);
  });

  test('WEBHOOK_ALLOW_PRIVATE allows every address, and http', () => {
    for (const url of [
      'http://127.0.0.1:8080/',
      'https://10.0.0.1/',
      'http://[::1]:9/',
      'http://receiver:3000/',
    ]) {
      assert.equal(checkEndpointUrl(url, true).href, url);
    }
    assert.throws(() => checkEndpointUrl('ftp://x/', true), /must be https, not ftp/);
  });

  test('a name is refused when any address it resolves to is not public', async () => {
    const resolving =
      (...addresses: string[]): Resolve =>
      async () =>
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const url = new URL('https://hooks.example.org/');
    assert.deepEqual(await resolvePublic(url, resolving('93.184.216.34', '2606:4700::1')), [
      '93.184.216.34',
      '2606:4700::1',
    ]);
    await assert.rejects(
      resolvePublic(url, resolving('93.184.216.34', '127.0.0.1')),
      /hooks\.example\.org resolves to 127\.0\.0\.1, which is a loopback address/,
    );
    await assert.rejects(
      resolvePublic(url, resolving('::ffff:10.1.2.3')),
      /resolves to ::ffff:10\.1\.2\.3, which is a private address/,
    );
    const failing: Resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await assert.rejects(resolvePublic(url, failing), /cannot resolve hooks\.example\.org: no such host/);
  });

  test('DNS rebinding: the delivery resolves the name itself and never connects to an address that is not public', async () => {
    let requests = 0;
    const receiver = createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    // The name was public when the endpoint was added; now it points at the loopback, where the receiver is.
    let resolved = 0;
    const rebound: Resolve = async () => {
      resolved++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const sender = createSender({ allowPrivate: false, lookup: guardedLookup(rebound) });
    try {
      const result = await sender.send(`https://rebinding.example:${port}/hook`, {}, '{}');
      assert.equal(result.outcome, 'address_refused');
      assert.match(result.error, /rebinding\.example resolves to 127\.0\.0\.1, which is a loopback address/);
      assert.ok(resolved >= 1, 'the lookup was ours');
      // An address in the URL is checked before any connection, without a lookup.
      const literal = await sender.send(`https://127.0.0.1:${port}/hook`, {}, '{}');
      assert.equal(literal.outcome, 'address_refused');
      assert.equal(requests, 0, 'nothing reached the receiver');
    } finally {
      sender.close();
      receiver.close();
    }
  });
});
