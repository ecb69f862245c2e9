// The client's Link header parser (packages/client/src/link.ts) against RFC 8288 section 3: quoted strings
// with commas, semicolons and escapes, several relation types, case, parameters without values, whitespace,
// anchors, faults. Then against an independent implementation, the http-link-header package, on generated
// headers; and through the client, whose paging follows what the parser finds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import LinkHeader from 'http-link-header';
import { ChessportClient } from '../../packages/client/src/index.ts';
import { linkTarget, parseLinks, relationTypes } from '../../packages/client/src/link.ts';

const PAGE = 'https://chess.example.org/api/v1/games?limit=2';
const next = (header: string) => linkTarget(header, 'next', PAGE)?.url ?? null;
const abs = (path: string) => new URL(path, PAGE).href;

describe('RFC 8288 section 3', () => {
  test('a quoted string may hold a comma: the link after it is still read', () => {
    assert.equal(next('</a>; title="a, b"; rel="next"'), abs('/a'));
    assert.equal(next('</a>; title="a, b", </b>; rel="next"'), abs('/b'));
  });

  test('a quoted string may hold `;rel=next`: that is a title, not a relation', () => {
    assert.equal(next('</a>; title="x;rel=next"'), null);
    assert.equal(next('</a>; title="x;rel=next", </b>; rel=next'), abs('/b'));
    assert.equal(next('</a>; title="x,</b>; rel=next"'), null);
  });

  test('quoted-pair escapes: \\" and \\\\ inside a quoted string', () => {
    const [link] = parseLinks('</a>; title="say \\"hi\\", \\\\ ok"; rel="next"');
    assert.deepEqual(link?.params, [
      ['title', 'say "hi", \\ ok'],
      ['rel', 'next'],
    ]);
    assert.equal(next('</a>; title="\\"; rel=next"'), null, 'the escaped quote does not end the string');
  });

  test('rel is a list of relation types: "next last", "prev  next", and a token form', () => {
    assert.equal(next('</a>; rel="next last"'), abs('/a'));
    assert.equal(next('</a>; rel="prev  next"'), abs('/a'));
    assert.equal(next('</a>; rel=next'), abs('/a'));
    const [spaced] = parseLinks('</a>; rel=" Next\tLAST "');
    assert.ok(spaced);
    assert.deepEqual(relationTypes(spaced), ['next', 'last']);
    assert.equal(next('</a>; rel="nextpage"'), null, 'a relation type is matched whole');
    assert.equal(next('</a>; rel="prev", </b>; rel="first"'), null);
  });

  test('relation types and parameter names are case-insensitive', () => {
    assert.equal(next('</a>; REL="NEXT"'), abs('/a'));
    assert.equal(next('</a>; Rel=Next'), abs('/a'));
    assert.equal(linkTarget('</a>; rel="next"', 'NEXT', PAGE)?.url, abs('/a'));
  });

  test('only the first rel of a link counts', () => {
    assert.equal(next('</a>; rel="prev"; rel="next"'), null);
    assert.equal(next('</a>; rel="next"; rel="prev"'), abs('/a'));
  });

  test('parameters without a value, and values in token form', () => {
    assert.deepEqual(parseLinks('</a>; crossorigin; rel=next; hreflang=de; x')[0]?.params, [
      ['crossorigin', null],
      ['rel', 'next'],
      ['hreflang', 'de'],
      ['x', null],
    ]);
    assert.equal(next('</a>; crossorigin; rel=next'), abs('/a'));
    // RFC 8187 extended values are tokens: kept as written.
    assert.deepEqual(parseLinks("</a>; title*=UTF-8'de'n%c3%a4chste; rel=next")[0]?.params, [
      ['title*', "UTF-8'de'n%c3%a4chste"],
      ['rel', 'next'],
    ]);
  });

  test('whitespace: none, spaces and tabs around ; , and =, empty list elements', () => {
    assert.equal(next('</a>;rel=next'), abs('/a'));
    assert.equal(next('  </a> \t;\t rel = "next" \t'), abs('/a'));
    assert.equal(next(', ,</x>; rel=prev ,, </a>;rel=next,'), abs('/a'));
    assert.equal(next('</a>;; rel=next'), abs('/a'));
    assert.deepEqual(
      parseLinks('</a>,</b>;rel=next,</c>').map((link) => link.target),
      ['/a', '/b', '/c'],
    );
  });

  test('the target may hold commas and semicolons; it is resolved against the request URL', () => {
    assert.equal(next('</games?a=1,2;b=3>; rel="next"'), abs('/games?a=1,2;b=3'));
    assert.equal(next('<?offset=2>; rel="next"'), abs('?offset=2'));
    assert.equal(next('<https://other.example/x>; rel=next'), 'https://other.example/x');
    assert.deepEqual(linkTarget('<http://[bad>; rel=next', 'next', PAGE), {
      target: 'http://[bad',
      url: null,
    });
  });

  test('a link anchored elsewhere is about another resource; anchored at the page it counts', () => {
    assert.equal(next('</a>; rel=next; anchor="/other"'), null);
    assert.equal(next('</a>; rel=next; anchor="/other", </b>; rel=next'), abs('/b'));
    assert.equal(next(`</a>; rel=next; anchor="${PAGE}"`), abs('/a'));
    assert.equal(next('</a>; anchor=""; rel=next'), abs('/a'), 'an empty anchor is the page itself');
  });

  test('a fault keeps what came before it in its link and goes on at the next comma', () => {
    assert.equal(next('</a>; rel=next; title=two words'), abs('/a'));
    assert.equal(next('</a>; title=two words; rel=next'), null);
    assert.equal(next('</a>; title=two words; rel=next, </b>; rel=next'), abs('/b'));
    assert.equal(next('junk, </b>; rel=next'), abs('/b'));
    assert.equal(next('</a>; rel="next'), null, 'an unterminated quoted string is no value');
    assert.equal(next('</a; rel=next'), null, 'a target that does not end');
    assert.equal(next('</a> x, </b>; rel=next'), abs('/b'));
    assert.equal(next('</a>; ="next", </b>; rel=next'), abs('/b'));
    assert.equal(next('</a>; title="x, y" z; rel=next, </b>; rel="next"'), abs('/b'));
    assert.equal(next(''), null);
    assert.equal(linkTarget(null, 'next', PAGE), null);
  });
});

// ---- differential: http-link-header as an independent implementation -----------------------------------

/** A small deterministic generator (mulberry32), so that a failure names a seed that reproduces it. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]) => items[int(items.length)] as T;
  return { int, pick, chance: (p: number) => next() < p };
}

type Random = ReturnType<typeof random>;

const TYPES = ['next', 'prev', 'last', 'first', 'alternate', 'self', 'https://rel.example/x'] as const;

function caseMix(rng: Random, text: string): string {
  return [...text].map((c) => (rng.chance(0.3) ? c.toUpperCase() : c)).join('');
}

/**
 * One generated Link header, within what both parsers read by the RFC: every parameter has a value, rel
 * lists are separated by one space, and whitespace is spaces after ; and , only. The package misreads the
 * rest: a parameter without a value takes the next one's name, and whitespace before ; or , goes into a
 * token value or, after a quoted string, derails its parser.
 */
function generated(rng: Random): string {
  const ows = () => rng.pick(['', ' ', '  ']);
  const quotedText = () => {
    const pieces = ['a', 'b c', ',', ';', '=', 'rel=next', '<x>', '\\"', '\\\\', ', </z>; rel=next', "'"];
    return `"${Array.from({ length: 1 + rng.int(3) }, () => rng.pick(pieces)).join('')}"`;
  };
  const links = Array.from({ length: 1 + rng.int(4) }, () => {
    const target = rng.pick([
      '/a',
      '/api/v1/games?offset=2&limit=2',
      '/x,y;z',
      'https://e.example/p?q=1',
      '',
    ]);
    const params: string[] = [];
    for (let n = rng.int(3); n > 0; n--) {
      const name = rng.pick(['title', 'type', 'hreflang', 'media', 'x-custom']);
      params.push(`${caseMix(rng, name)}=${rng.chance(0.5) ? quotedText() : 'tok'}`);
    }
    const types = Array.from({ length: 1 + rng.int(3) }, () => caseMix(rng, rng.pick(TYPES)));
    // A URI is no token (`:` and `/` are not token characters): as a relation type it is quoted.
    const token = types.length === 1 && !types[0]?.includes(':') && rng.chance(0.5);
    const rel = token ? types[0] : `"${types.join(' ')}"`;
    params.splice(rng.int(params.length + 1), 0, `${caseMix(rng, 'rel')}=${rel}`);
    return `<${target}>${params.map((param) => `;${ows()}${param}`).join('')}`;
  });
  return links.join(`,${ows()}`);
}

/** What a header says, as both parsers can: each link's target, its relation types and its title. */
function ours(header: string) {
  return parseLinks(header).flatMap((link) => {
    const title = link.params.find(([name]) => name === 'title')?.[1] ?? undefined;
    return relationTypes(link).map((rel) => ({ target: link.target, rel, title }));
  });
}

function theirs(header: string) {
  return LinkHeader.parse(header).refs.map((ref) => ({
    target: ref.uri,
    rel: ref.rel.toLowerCase(),
    title: ref.title as string | undefined,
  }));
}

describe('the same reading as http-link-header', () => {
  test('on 3,000 generated headers: every link, relation type and title, and the next link', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const header = generated(random(seed));
      const expected = theirs(header);
      assert.deepEqual(ours(header), expected, `seed ${seed}: ${header}`);
      const first = expected.find((link) => link.rel === 'next');
      assert.equal(next(header), first ? abs(first.target) : null, `seed ${seed}: ${header}`);
    }
  });

  test('on the headers chessport itself sends', () => {
    for (const header of [
      '</api/v1/games?limit=2&offset=2>; rel="next"',
      '</api/v1/games?limit=2&offset=4>; rel="next", </api/v1/games?limit=2&offset=0>; rel="prev"',
      '</api/v1/databases/classics/games?limit=50&offset=0>; rel="prev"',
    ]) {
      assert.deepEqual(ours(header), theirs(header), header);
    }
  });
});

describe('the client follows what the parser finds', () => {
  test('allGames() pages through Link headers with quoted commas and rel lists', async () => {
    const pages = ['/api/v1/games?offset=2', '/api/v1/games?offset=4'];
    const headers = [
      `</api/v1/games?offset=0>; rel="prev first"; title="page 1, of 3", <${pages[0]}>; title="a;rel=x"; rel="NEXT last"`,
      `<${pages[1]}>; title="escaped \\" quote"; Rel=next`,
      '</api/v1/games?offset=2>; rel="prev"; title="x;rel=next"',
    ];
    const asked: string[] = [];
    const serve: typeof fetch = async (input) => {
      const url = new URL(String(input));
      asked.push(url.pathname + url.search);
      const n = asked.length - 1;
      return new Response(JSON.stringify({ data: [{ id: `g${2 * n}` }, { id: `g${2 * n + 1}` }] }), {
        headers: { 'content-type': 'application/json', link: headers[n] as string },
      });
    };
    const client = new ChessportClient({ baseUrl: 'http://chess.test', token: 'cp_x', fetch: serve });
    const ids: string[] = [];
    for await (const game of client.allGames({ limit: 2 })) ids.push(game.id);
    assert.deepEqual(ids, ['g0', 'g1', 'g2', 'g3', 'g4', 'g5']);
    assert.deepEqual(asked, ['/api/v1/games?limit=2', ...pages]);
  });

  test('a next link whose target is no URL is a ChessportError, not the end of the list', async () => {
    const serve: typeof fetch = async () =>
      new Response('{"data":[]}', {
        headers: { 'content-type': 'application/json', link: '<http://[oops>; rel="next"' },
      });
    const client = new ChessportClient({ baseUrl: 'http://chess.test', token: 'cp_x', fetch: serve });
    await assert.rejects(
      client.games(),
      /unexpected_response: HTTP 200: a Link rel="next" to http:\/\/\[oops/,
    );
  });
});
