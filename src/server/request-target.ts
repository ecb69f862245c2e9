// Request targets that the router would refuse before choosing a route, answered by the route instead
// (docs/design.md 14: a malformed id is a 404 like an unknown one, and authentication comes first).
//
// find-my-way percent-decodes the path before routing and answered 400 for one that does not decode: `%ZZ`,
// a lone `%`, or bytes that are not UTF-8 (`%E0%A4%A`). Such a path is routed with its `%` taken
// literally: in an id it names no game or database (401 without a valid token, 404 with one), elsewhere it
// is an unknown path (404).

/** Fastify's rewriteUrl: the target as sent, or with every `%` of an undecodable path escaped. */
export function routableUrl(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.includes('%')) return url;
  try {
    decodeURI(path);
    return url;
  } catch {
    return path.replaceAll('%', '%25') + url.slice(path.length);
  }
}
