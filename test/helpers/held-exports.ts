// Exports held open by clients that stop reading, for the suites on heavy requests and long answers: the
// server keeps such an export running (its slot taken) until the client leaves or the server cuts it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import type { Env } from './harness.ts';
import { seed } from './production.ts';

/** Each game's comment: 100 KB, so that a database of a few hundred games outgrows every buffer on the way. */
export const BIG_COMMENT = 'analysis '.repeat(11_000).trim();

/** Users alice and bob, their tokens, and alice's database of 300 games of 100 KB: 30 MB of PGN. */
export const seedLarge = (env: Env) => seed(env, 300, BIG_COMMENT);

/**
 * `n` games, each with a comment of 100 KB of random letters: unlike BIG_COMMENT, they do not compress, so
 * that a compressed export outgrows the buffers too.
 */
export function writeRandomGames(dir: string, name: string, n: number): string {
  const games: string[] = [];
  for (let i = 1; i <= n; i++) {
    const comment = randomBytes(75_000).toString('base64');
    games.push(
      `[Event "Random ${i}"]\n[White "Random White ${i}"]\n[Black "Random Black"]\n[Result "1-0"]\n\n` +
        `1. e4 {${comment}} e5 2. Nf3 Nc6 1-0\n`,
    );
  }
  const path = join(dir, name);
  writeFileSync(path, games.join('\n'));
  return path;
}

export interface HeldExport {
  status: number;
  headers: IncomingMessage['headers'];
  /** The answer's body so far (all of it for an answer other than 200). */
  received(): Buffer;
  /** The answer: paused after its head when it is 200. */
  res: IncomingMessage;
  req: ClientRequest;
  /** Reads the rest: resolves with how the answer ended, `end` (complete) or `error` (cut off). */
  finish(): Promise<{ ended: 'end' | 'error'; body: Buffer }>;
  /** Reads at most `bytes` more, then pauses again. */
  read(bytes: number): Promise<void>;
  /** Goes away mid-answer. */
  leave(): void;
}

/**
 * GET `path` with the token; a 200 answer is paused once its head is in (nothing more is read until asked),
 * any other is read whole.
 */
export function holdExport(
  base: string,
  path: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<HeldExport> {
  const url = new URL(base + path);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { authorization: `Bearer ${token}`, ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let ended: Promise<'end' | 'error'> | undefined;
        const ending = () => {
          ended ??= new Promise((done) => {
            res.once('end', () => done('end'));
            res.once('error', () => done('error'));
            res.once('aborted', () => done('error'));
            res.once('close', () => done(res.complete ? 'end' : 'error'));
          });
          return ended;
        };
        ending();
        const held: HeldExport = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          res,
          req,
          received: () => Buffer.concat(chunks),
          async finish() {
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.resume();
            return { ended: await ending(), body: Buffer.concat(chunks) };
          },
          async read(bytes) {
            const until = held.received().length + bytes;
            await new Promise<void>((done) => {
              const onData = (chunk: Buffer) => {
                chunks.push(chunk);
                if (held.received().length < until) return;
                res.pause();
                res.off('data', onData);
                done();
              };
              res.on('data', onData);
              void ending().then(() => done());
              res.resume();
            });
          },
          leave: () => req.destroy(),
        };
        if (res.statusCode === 200) {
          res.pause();
          resolve(held);
          return;
        }
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => resolve(held));
      },
    );
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}

/** The JSON error of an answer that is not 200. */
export function errorOf(held: HeldExport): { error: string; error_description: string } {
  assert.notEqual(held.status, 200);
  return JSON.parse(held.received().toString());
}
