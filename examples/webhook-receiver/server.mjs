// A tiny receiver of chessport webhooks (docs/webhooks.md). It verifies every delivery with svix against the
// endpoint's secret, answers at once, and then, given a token, reads the user's changes feed: the delivery
// says only that something changed, the feed says what.
//
//   WEBHOOK_SECRET=whsec_... PORT=3000 node server.mjs
//   (optional) CHESSPORT_URL=https://chess.example.org CHESSPORT_TOKEN=cp_... to read the feed
//
// It prints one JSON line per event on stdout.
import { createServer } from 'node:http';
import { Webhook } from 'svix';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the secret `chessport webhooks add` printed');
  process.exit(1);
}
const webhook = new Webhook(secret);
const seen = new Set(); // webhook-ids already handled: a delivery may come more than once
let cursor; // where this receiver's reading of the feed stands (keep it in a database in a real app)

const server = createServer((req, res) => {
  if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    // Verify the body exactly as it came: parsing and serialising it again would change the bytes signed.
    const body = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      webhook.verify(body, req.headers); // throws on a wrong signature or a timestamp over 5 minutes off
      event = JSON.parse(body);
    } catch (error) {
      console.error(`refused a delivery: ${error.message}`);
      return res.writeHead(400).end();
    }
    res.writeHead(204).end(); // answer within the 10 s chessport waits; do the work afterwards
    const id = req.headers['webhook-id'];
    if (seen.has(id)) return;
    seen.add(id);
    console.log(JSON.stringify({ event: event.type, user: event.data.user, webhookId: id }));
    if (event.type === 'changes.available')
      readFeed(event.data.user).catch((error) => console.error(error.message));
  });
});

/** Follows the changes feed until it has no more: every game that changed since the last reading. */
async function readFeed(user) {
  const base = process.env.CHESSPORT_URL;
  const token = process.env.CHESSPORT_TOKEN;
  if (!base || !token) return;
  let changed = 0;
  for (;;) {
    const url = new URL('/api/v1/changes', base);
    if (cursor) url.searchParams.set('cursor', cursor);
    const answer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (!answer.ok) throw new Error(`GET /changes answered ${answer.status}`);
    const page = await answer.json();
    changed += page.data.length;
    cursor = page.nextCursor;
    if (!page.hasMore) break;
  }
  console.log(JSON.stringify({ read: changed, user }));
}

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(JSON.stringify({ listening: `http://${address}:${port}` }));
});
