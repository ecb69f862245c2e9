// Feed cursors reveal nothing (docs/design.md 20): the change sequence is shared by every user, so a cursor that
// showed its position told a user how many writes others made. And the cursors issued before (v1: the
// position in clear, with an HMAC) keep working, since cursors do not expire. Black-box, on a store of its
// own whose server secret the test knows, to write v1 cursors as the server used to.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { type FeedPage, importNumbered, seedNumbered } from '../helpers/changes-fixtures.ts';
import { cliJson, type Env, http, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, seed, serveInProcess } from '../helpers/in-process.ts';

const run = promisify(execFile);
const SECRET = 'cursor-test-secret-0123456789abcdef';
const ALL = 'user.read,databases.read,games.read';
const CURSOR_INVALID =
  'cursor is not valid: pass the nextCursor of an earlier page, unchanged, with the same token';

let env: Env;
let base: string;
const tokens = { carol: '', carolOtherApp: '', dave: '' };

let app: InProcessServer;

before(async () => {
  env = tempEnv({ CHESSPORT_SECRET: SECRET });
  app = await serveInProcess(env);
  const s = seed(app.store);
  for (const user of ['carol', 'dave']) await s.addUser(user);
  for (const name of ['app-one', 'app-two']) await s.addApp(name);
  const load = (user: string, prefix: string, n: number) => seedNumbered(app.store, env.dir, user, prefix, n);
  // Dave's twelve changes come first, so Carol's first change has a two-digit place in the sequence while
  // Dave's has a one-digit one; then both write more, interleaved.
  await load('dave', 'DaveA', 12);
  await load('carol', 'CarolA', 3);
  await load('dave', 'DaveB', 3);
  await load('carol', 'CarolB', 2);
  tokens.carol = await s.issueToken('carol', 'app-one', ALL);
  tokens.carolOtherApp = await s.issueToken('carol', 'app-two', ALL);
  tokens.dave = await s.issueToken('dave', 'app-one', ALL);
  base = `${app.base}/api/v1`;
});
after(async () => {
  await app?.stop();
  env?.cleanup();
});

const feed = (token: string, query: Record<string, string | number> = {}, headers = {}) =>
  http<FeedPage>(base, `/changes?${new URLSearchParams(query as Record<string, string>)}`, {
    token,
    headers,
  });

/** Every page of a feed read with limit=1: one cursor per change of the user, in order. */
async function pagesOf(token: string): Promise<FeedPage[]> {
  const pages: FeedPage[] = [];
  let query: Record<string, string | number> = { limit: 1 };
  for (;;) {
    const res = await feed(token, query);
    assert.equal(res.status, 200, res.text);
    pages.push(res.json);
    if (!res.json.hasMore) return pages;
    query = { limit: 1, cursor: res.json.nextCursor };
  }
}

/** Bytes at the same offsets that are equal in both cursors, after the first (the format's version). */
function sharedBytes(a: string, b: string): number {
  const x = Buffer.from(a, 'base64url');
  const y = Buffer.from(b, 'base64url');
  let same = 0;
  for (let i = 1; i < Math.min(x.length, y.length); i++) if (x[i] === y[i]) same++;
  return same;
}

/** A v1 cursor, as the server issued them before: the position in clear and an HMAC bound to the reader. */
function v1Cursor(reader: string, seq: number, secret = SECRET): string {
  const payload = `v1.${seq}`;
  const mac = createHmac('sha256', secret)
    .update(`chessport-cursor\0${reader}\0${payload}`)
    .digest('base64url');
  return `${Buffer.from(payload).toString('base64url')}.${mac}`;
}

/** The reader a cursor is bound to: the user's pairwise id for the token's app, as /me gives it. */
async function readerOf(token: string): Promise<string> {
  return (await http<{ data: { id: string } }>(base, '/me', { token })).json.data.id;
}

describe('feed cursors reveal no position', () => {
  test("two users' cursors after the same number of their own changes look alike: one length, no position in them", async () => {
    const carol = (await pagesOf(tokens.carol)).map((p) => p.nextCursor);
    const dave = (await pagesOf(tokens.dave)).map((p) => p.nextCursor);
    assert.equal(carol.length, 5);
    assert.equal(dave.length, 15);
    const all = [...carol, ...dave];
    const length = carol[0]?.length;
    for (const cursor of all) {
      assert.equal(cursor.length, length, 'every cursor has the same length');
      assert.match(cursor, /^[A-Za-z0-9_-]+$/, 'one opaque token, no readable parts');
      const bytes = Buffer.from(cursor, 'base64url').toString('latin1');
      assert.doesNotMatch(bytes, /v[0-9]\.[0-9]/, 'no version and position in clear');
    }
    // Consecutive positions of one reader share no more bytes than random strings would (about 0.14 of 36).
    for (const cursors of [carol, dave]) {
      for (let i = 1; i < cursors.length; i++) {
        assert.ok(sharedBytes(cursors[i - 1] as string, cursors[i] as string) < 8, `cursors ${i - 1}, ${i}`);
      }
    }
  });

  test('the same position seen by two readers gives unrelated cursors; by one reader, always the same one', async () => {
    const carol = (await pagesOf(tokens.carol)).at(-1)?.nextCursor as string;
    const otherApp = (await pagesOf(tokens.carolOtherApp)).at(-1)?.nextCursor as string;
    assert.notEqual(carol, otherApp);
    assert.ok(sharedBytes(carol, otherApp) < 8);
    assert.equal((await pagesOf(tokens.carol)).at(-1)?.nextCursor, carol);
  });

  test('the same page gives the same body and ETag, so If-None-Match gives 304', async () => {
    const [first] = await pagesOf(tokens.carol);
    const query = { limit: 2, cursor: first?.nextCursor as string };
    const a = await feed(tokens.carol, query);
    const b = await feed(tokens.carol, query);
    assert.equal(a.status, 200);
    assert.equal(b.text, a.text);
    const etag = a.headers.get('etag') as string;
    assert.ok(etag);
    assert.equal(b.headers.get('etag'), etag);
    const again = await feed(tokens.carol, query, { 'if-none-match': etag });
    assert.equal(again.status, 304);
  });

  test('an altered cursor, a spliced one and one of another reader are 400', async () => {
    const carol = (await pagesOf(tokens.carol)).map((p) => p.nextCursor);
    const dave = (await pagesOf(tokens.dave)).map((p) => p.nextCursor);
    const [one, two] = carol as [string, string];
    const half = Math.floor(one.length / 2);
    const bad = [
      one.slice(0, half) + two.slice(half),
      two.slice(0, half) + one.slice(half),
      (dave[0] as string).slice(0, half) + one.slice(half),
      `${one.slice(0, -1)}${one.at(-1) === 'A' ? 'B' : 'A'}`,
      dave[0] as string,
    ];
    for (const cursor of bad) {
      const res = await feed(tokens.carol, { cursor });
      assert.equal(res.status, 400, cursor);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: CURSOR_INVALID });
    }
    const foreign = await feed(tokens.carolOtherApp, { cursor: one });
    assert.equal(foreign.status, 400);
  });
});

describe('v1 cursors, issued before, keep working', () => {
  test('a v1 cursor at every position gives the page a new cursor at that position gives', async () => {
    const pages = await pagesOf(tokens.carol);
    const reader = await readerOf(tokens.carol);
    // v1 at 0 is the beginning.
    const start = await feed(tokens.carol, { limit: 1, cursor: v1Cursor(reader, 0) });
    assert.equal(start.status, 200);
    assert.deepEqual(start.json, pages[0]);
    // Walk the positions in clear until past Carol's last change: each v1 position answers with the first
    // change after it, and the new cursor of that change's page, exactly as following the feed does.
    const byCursor = new Map(pages.map((p) => [p.nextCursor, p]));
    const seen = new Set<string>();
    const last = pages.at(-1) as FeedPage;
    for (let seq = 0; seq < 10_000; seq++) {
      const res = await feed(tokens.carol, { limit: 1, cursor: v1Cursor(reader, seq) });
      assert.equal(res.status, 200, `v1 at ${seq}`);
      if (res.json.data.length === 0) {
        // Past the last change: an empty page at the position sent. At Carol's last change, it is the
        // cursor following the feed ended with.
        if (res.json.nextCursor === last.nextCursor) break;
        continue;
      }
      const page = byCursor.get(res.json.nextCursor);
      assert.ok(page, `v1 at ${seq} answers with a cursor of one of the feed's pages`);
      assert.deepEqual(res.json.data, page.data);
      seen.add(res.json.nextCursor);
    }
    assert.equal(seen.size, pages.length, 'every page reached from some v1 position');
  });

  test('a v1 cursor is bound to its reader and its secret, and an altered one is 400', async () => {
    const reader = await readerOf(tokens.carol);
    const cursor = v1Cursor(reader, 3);
    assert.equal((await feed(tokens.carol, { cursor })).status, 200);
    const bad = [
      v1Cursor(reader, 3, 'another-secret-0123456789abcdef'),
      v1Cursor(await readerOf(tokens.dave), 3),
      `${cursor.slice(0, -1)}${cursor.at(-1) === 'A' ? 'B' : 'A'}`,
      `${v1Cursor(reader, 4).split('.')[0]}.${cursor.split('.')[1]}`,
    ];
    for (const token of [tokens.dave, tokens.carolOtherApp]) {
      assert.equal((await feed(token, { cursor })).status, 400);
    }
    for (const c of bad) {
      const res = await feed(tokens.carol, { cursor: c });
      assert.equal(res.status, 400, c);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: CURSOR_INVALID });
    }
  });
});

describe('a cursor from before a restore', () => {
  // The store restored from a backup has its change sequence back where the backup was taken: the next
  // writes take positions that a reader's newer cursor has passed. The server refuses such a cursor while
  // it is ahead of the store, so the reader starts again instead of missing those writes in silence.
  let restoreEnv: Env;
  after(() => restoreEnv?.cleanup());

  /** A backup of the store as an operator makes one (docs/operations.md, Backups), and its restore over the store. */
  async function backup(target: Env): Promise<() => Promise<void>> {
    const dump = join(target.dir, 'backup');
    if (target.dialect === 'postgres') {
      await run('pg_dump', ['-Fc', '-f', dump, target.databaseUrl]);
      return async () => {
        await run('pg_restore', ['--clean', '--if-exists', '-d', target.databaseUrl, dump]);
      };
    }
    const db = new Database(target.databaseUrl);
    await db.backup(dump);
    db.close();
    return async () => {
      for (const suffix of ['-wal', '-shm']) rmSync(`${target.databaseUrl}${suffix}`, { force: true });
      copyFileSync(dump, target.databaseUrl);
    };
  }

  test('a cursor ahead of the restored store is 400 until the reader starts again; one within it reads on', async () => {
    restoreEnv = tempEnv({ CHESSPORT_SECRET: SECRET });
    await cliJson(restoreEnv, ['users', 'add', 'erin']);
    await cliJson(restoreEnv, ['apps', 'add', 'app-one']);
    const load = (name: string, n: number) => importNumbered(restoreEnv, 'erin', name, n, name);
    await load('Before', 3);
    // Issued before the backup: a restore takes back what came after it, tokens too.
    const token = await issueToken(restoreEnv, 'erin', 'app-one', ALL);
    const restore = await backup(restoreEnv);
    await load('After', 2);
    let restored = await serveInProcess(restoreEnv);
    const read = (query: Record<string, string | number>) =>
      http<FeedPage>(
        `${restored.base}/api/v1`,
        `/changes?${new URLSearchParams(query as Record<string, string>)}`,
        {
          token,
        },
      );
    const within = (await read({ limit: 3 })).json.nextCursor;
    const ahead = (await read({})).json.nextCursor;
    assert.equal((await read({ cursor: ahead })).status, 200, 'an idle feed polled at its end');
    await restored.stop();

    await restore();
    restored = await serveInProcess(restoreEnv);
    try {
      // The case in docs/operations.md: a game deleted after the restore takes the position after the backup's last.
      const games = await http<{ data: { id: string }[] }>(`${restored.base}/api/v1`, '/games', { token });
      const deleted = games.json.data[0]?.id as string;
      await cliJson(restoreEnv, ['games', 'delete', deleted]);
      const refused = await read({ cursor: ahead });
      assert.equal(refused.status, 400, refused.text);
      assert.deepEqual(refused.json, {
        error: 'invalid_request',
        error_description:
          'cursor is ahead of the store, which was restored from an older backup: read the feed again from ' +
          'the start, without cursor',
      });
      const onward = await read({ cursor: within });
      assert.equal(onward.status, 200);
      assert.deepEqual(
        onward.json.data.map((c) => [c.id, c.deleted]),
        [[deleted, true]],
      );
      const fromStart = await read({});
      assert.equal(fromStart.json.data.length, 3);
    } finally {
      await restored.stop();
    }
  });
});
