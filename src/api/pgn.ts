// PGN answers (docs/design.md 15): chosen by format=pgn or by an Accept header that prefers a PGN media type.
import type { FastifyReply, FastifyRequest } from 'fastify';

export const PGN_TYPE = 'application/x-chess-pgn';
const PGN_TYPES = new Set([PGN_TYPE, 'application/vnd.chess-pgn']);

/** True when the Accept header's most preferred acceptable type is a PGN type. */
export function acceptsPgn(accept: string | undefined): boolean {
  if (!accept) return false;
  let best = { q: 0, pgn: false };
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!(q > 0)) continue;
    const pgn = PGN_TYPES.has(type.trim());
    // On equal preference a PGN type wins over wildcards and JSON: the client named it explicitly.
    if (q > best.q || (q === best.q && pgn)) best = { q, pgn };
  }
  return best.pgn;
}

export function wantsPgn(request: FastifyRequest): boolean {
  const { format } = request.query as { format?: string };
  return format === 'pgn' || acceptsPgn(request.headers.accept);
}

export function pgnHeaders(reply: FastifyReply, slug: string): FastifyReply {
  return reply
    .header('content-type', `${PGN_TYPE}; charset=utf-8`)
    .header('content-disposition', `attachment; filename="${slug}.pgn"`);
}
