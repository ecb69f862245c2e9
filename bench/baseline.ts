// The benches' reference point: a bare Fastify process answering GET /games with a fixed JSON body (the same
// bytes as a real /games page), so "x baseline" isolates what chessport adds over Fastify itself.
// Usage: node bench/baseline.ts <port> <body.json>   (started by bench/support.ts startBaseline)
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [port, bodyFile] = process.argv.slice(2);
const body: unknown = JSON.parse(readFileSync(bodyFile ?? '', 'utf8'));
const app = Fastify({ logger: false });
app.get('/games', async () => body);
await app.listen({ host: '127.0.0.1', port: Number(port) });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
