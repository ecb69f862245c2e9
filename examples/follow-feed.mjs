// A minimal integration: take over a user's games and keep them current, as an app that installed
// @chessport/client does. The first run takes every game from one NDJSON export (one snapshot of the server)
// and saves the export's cursor; every run then follows the changes feed from the saved cursor, each game in
// its item (one request per page of up to 500). Each game becomes <out>/games/<id>.pgn, a deleted game's file
// goes, and the feed's cursor is saved in <out>/cursor once its page is saved: the next run continues from
// there, and a run stopped at any point repeats at most that page (a first run stopped mid-export starts
// again). A server that cannot be reached, or that refuses the token, is one line on stderr and exit code 1.
//
//   npm install /path/to/chessport-client-0.1.0.tgz   (the packed package: docs/client-and-sync.md)
//   CHESSPORT_URL=http://127.0.0.1:8080 CHESSPORT_TOKEN=cp_... node follow-feed.mjs [out-folder]
//
// `chessport demo` prints a token (user.read, databases.read and games.read) and serves on port 8080.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChessportClient, ChessportError, ChessportNetworkError } from '@chessport/client';

const baseUrl = process.env.CHESSPORT_URL ?? 'http://127.0.0.1:8080';
const token = process.env.CHESSPORT_TOKEN;
if (!token) {
  console.error('set CHESSPORT_TOKEN to an access token (chessport demo prints one)');
  process.exit(1);
}
const out = process.argv[2] ?? 'chessport-games';
const games = join(out, 'games');
const cursorFile = join(out, 'cursor');
mkdirSync(games, { recursive: true });

/**
 * Writes a file whole or not at all: a temp file, then a rename.
 * @param {string} file
 * @param {string} text
 */
function writeWhole(file, text) {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

const api = new ChessportClient({ baseUrl, token, userAgent: 'follow-feed-example/1.0' });
try {
  const me = await api.me();
  console.log(`following the games of ${me.name ?? me.id}`);

  const saved = existsSync(cursorFile) ? readFileSync(cursorFile, 'utf8') : undefined;
  let upserted = 0;
  let deleted = 0;
  let cursor = saved;
  if (saved === undefined) {
    // The take-over: every game from one export, then its cursor. A first run stopped part-way saved no
    // cursor: what it wrote goes, since some of those games may have been deleted since.
    rmSync(games, { recursive: true, force: true });
    mkdirSync(games, { recursive: true });
    const exported = await api.exportNdjson();
    if (exported.cursor === null)
      await exported.cancel(); // an older server: the feed from its beginning
    else {
      for await (const game of exported) {
        writeWhole(join(games, `${game.id}.pgn`), game.pgn);
        upserted++;
        console.log(`saved ${game.id}: ${game.white.name ?? '?'} - ${game.black.name ?? '?'} ${game.result}`);
      }
      cursor = exported.cursor;
      writeWhole(cursorFile, cursor);
    }
  }
  for await (const page of api.feed({ cursor, expand: 'game', limit: 500 })) {
    for (const change of page.data) {
      const file = join(games, `${change.id}.pgn`);
      if (change.game) {
        writeWhole(file, change.game.pgn);
        upserted++;
        const { white, black, result } = change.game;
        console.log(`saved ${change.id}: ${white.name ?? '?'} - ${black.name ?? '?'} ${result}`);
      } else {
        rmSync(file, { force: true });
        deleted++;
        console.log(`deleted ${change.id}`);
      }
    }
    // Only once the page's games are saved.
    writeWhole(cursorFile, page.nextCursor);
  }
  console.log(
    `${upserted} saved, ${deleted} deleted (${saved ? 'continued' : 'first run'}); cursor in ${cursorFile}`,
  );
} catch (error) {
  // What the client says of a failure is one line (the URL, the attempts, the cause): a stack trace tells
  // the user of this script nothing more.
  if (!(error instanceof ChessportNetworkError || error instanceof ChessportError)) throw error;
  console.error(`follow-feed: ${error.message}`);
  process.exitCode = 1;
}
