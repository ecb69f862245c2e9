// Which servers the sync takes for this machine's (packages/sync/src/loopback.ts): it asks those for uncompressed
// answers. Only loopback addresses and localhost; any other name or address is taken for a network.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopback } from '../../packages/sync/src/loopback.ts';

test('loopback addresses and localhost are this machine', () => {
  for (const url of [
    'http://127.0.0.1:8080',
    'http://127.1.2.3',
    'https://localhost',
    'http://LOCALHOST:9000/x',
    'http://api.localhost',
    'http://[::1]:8080',
    'http://[::ffff:127.0.0.1]',
  ])
    assert.equal(isLoopback(url), true, url);
});

test('every other host is across a network', () => {
  for (const url of [
    'https://chess.example.org',
    'http://10.0.0.5',
    'http://192.168.1.2:8080',
    'http://0.0.0.0',
    'http://[::]',
    'http://[fe80::1]',
    'http://128.0.0.1',
    'http://localhost.example.org',
    'http://[::ffff:10.0.0.1]',
  ])
    assert.equal(isLoopback(url), false, url);
});
