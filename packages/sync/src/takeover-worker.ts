// The take-over's writer thread (takeover-writer.ts): parses each batch of the export's lines and inserts its
// games into the mirror in one transaction, on a connection of its own, and answers with what it wrote. A line
// that is no JSON object fails its batch (rolled back) and the thread's work, with a message that says which.
import { parentPort, workerData } from 'node:worker_threads';
import type { GameDetail } from '@chessport/client';
import { TakeOverInserts } from './mirror.ts';
import type { WriterReply, WriterRequest } from './takeover-writer.ts';

const port = parentPort;
if (!port) throw new Error('takeover-worker.ts runs as a worker thread');
const inserts = new TakeOverInserts((workerData as { file: string }).file);
/** Lines of the export parsed so far, for the message of one that is no game. */
let line = 0;

/** The batch's games, parsed as the transaction inserts them; their databases added to `databaseIds`. */
function* games(lines: string[], databaseIds: Set<string>): Generator<GameDetail> {
  for (const text of lines) {
    line++;
    let game: unknown;
    try {
      game = JSON.parse(text);
    } catch {
      game = undefined;
    }
    if (typeof game !== 'object' || game === null || Array.isArray(game))
      throw new Error(`line ${line} of the export is not a JSON object: ${text.slice(0, 100)}`);
    databaseIds.add((game as GameDetail).databaseId);
    yield game as GameDetail;
  }
}

port.on('message', (request: WriterRequest) => {
  if (request === 'finish') {
    inserts.close();
    port.close(); // the thread ends
    return;
  }
  let reply: WriterReply;
  try {
    const databaseIds = new Set<string>();
    inserts.insert(games(request.lines, databaseIds));
    reply = { written: request.lines.length, databaseIds: [...databaseIds] };
  } catch (error) {
    reply = { failed: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
  if ('failed' in reply) {
    inserts.close();
    port.close();
  }
});
