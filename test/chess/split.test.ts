import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  CUT_NOTE,
  type LongLine,
  normalizeGame,
  PgnSplitter,
  type RawGame,
  splitPgn,
} from '../../src/chess/index.ts';
import { CORPUS, NO_CORPUS } from '../helpers/corpus.ts';

const AWKWARD = readFileSync(new URL('../fixtures/chess/split-awkward.pgn', import.meta.url), 'utf8');

/** Lines `from`..`to` (1-based, inclusive) of `text`, each with its line ending. */
function lines(text: string, from: number, to: number): string {
  return text
    .split(/(?<=\n)/)
    .slice(from - 1, to)
    .join('');
}

function splitInChunks(text: string, sizes: () => number, maxGameChars?: number): RawGame[] {
  const splitter = new PgnSplitter({ maxGameChars });
  const out: RawGame[] = [];
  for (let i = 0; i < text.length; ) {
    const n = Math.max(1, sizes());
    out.push(...splitter.push(text.slice(i, i + n)));
    i += n;
  }
  out.push(...splitter.end());
  return out;
}

/** Deterministic pseudo-random chunk sizes (1..4096), so failures are reproducible. */
function randomSizes(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    const r = s / 2147483648;
    return r < 0.3 ? 1 + Math.floor(r * 10) : Math.floor(r * 4096);
  };
}

test('awkward cases: each game cut where a user would cut it, with its start line', () => {
  const got = splitPgn(AWKWARD);
  const expected: [number, number, number][] = [
    // [index, first line, last line]
    [1, 1, 12], // escape line before the game, blank line in tags, comment lines starting with '['
    [2, 14, 14], // garbage between games: a "game" of its own, rejected by normalizeGame
    [3, 16, 20], // two blank lines between tags and movetext
    [4, 21, 21], // tags and moves on the same line
    [5, 22, 25], // leading whitespace; game without moves
    [6, 27, 27], // no tags
    [7, 28, 28], // no tags, no result
    [8, 30, 30], // starts with move 1 after a blank line
    [9, 31, 32], // bjbraams style: only [Result "*"]
  ];
  assert.deepEqual(
    got.map((g) => [g.index, g.line, g.text]),
    expected.map(([index, from, to]) => [index, from, lines(AWKWARD, from, to)]),
  );
  assert.deepEqual(
    got.map((g) => {
      const r = normalizeGame(g.text);
      return r.ok ? r.game.moves : r.reason;
    }),
    [
      'e2e4 e7e5 g1f3',
      "unexpected token 'garbage' at line 1",
      'e2e4 e7e5',
      'd2d4 d7d5',
      '',
      'c2c4 c7c5',
      'g2g3 g7g6',
      'b2b3 b7b6',
      'f2f4 f7f5',
    ],
  );
});

test('CRLF input splits at the same lines and keeps CRLF in the text', () => {
  const crlf = AWKWARD.replace(/\n/g, '\r\n');
  const lf = splitPgn(AWKWARD);
  const got = splitPgn(crlf);
  assert.deepEqual(
    got.map((g) => [g.index, g.line, g.text]),
    lf.map((g) => [g.index, g.line, g.text.replace(/\n/g, '\r\n')]),
  );
});

test('chunk boundaries do not matter: 1-byte, 7-byte and random chunks', () => {
  const inputs = [AWKWARD, AWKWARD.replace(/\n/g, '\r\n'), `\uFEFF${AWKWARD}`, AWKWARD.trimEnd()];
  for (const text of inputs) {
    const whole = splitPgn(text);
    assert.deepEqual(
      splitInChunks(text, () => 1),
      whole,
    );
    assert.deepEqual(
      splitInChunks(text, () => 7),
      whole,
    );
    for (let seed = 1; seed <= 5; seed++) assert.deepEqual(splitInChunks(text, randomSizes(seed)), whole);
  }
});

test('a cut anywhere, even inside the lines before a game, gives the same games', () => {
  // Escape and comment lines before a game belong to it and blank lines do not: the text of a game starts at
  // its first such line, which may have arrived a chunk earlier than its tags.
  const text = [
    '% escape before the first game',
    '[Event "a"]',
    '',
    '1. e4 { a comment',
    'over two lines } e5 1-0',
    '',
    '',
    '; a comment line',
    '% an escape line',
    '',
    '[Event "b"]',
    '1. d4 d5 (1... Nf6) *',
    '',
    '1. c4 0-1',
  ].join('\n');
  const whole = splitPgn(text);
  assert.equal(whole.length, 3);
  assert.ok(whole[1]?.text.startsWith('; a comment line\n% an escape line\n\n[Event "b"]'));
  for (let cut = 0; cut <= text.length; cut++) {
    const splitter = new PgnSplitter();
    const games = [
      ...splitter.push(text.slice(0, cut)),
      ...splitter.push(text.slice(cut)),
      ...splitter.end(),
    ];
    assert.deepEqual(games, whole, `cut at ${cut}`);
  }
});

test('a BOM is dropped, also when it arrives in a chunk of its own', () => {
  const splitter = new PgnSplitter();
  const out = [
    ...splitter.push(''),
    ...splitter.push('\uFEFF'),
    ...splitter.push('[Event "x"]\n\n1. e4 *\n'),
  ];
  out.push(...splitter.end());
  assert.deepEqual(out, [{ text: '[Event "x"]\n\n1. e4 *\n', line: 1, index: 1 }]);
});

test('a runaway brace comment ends at a tag line after a blank line', () => {
  const text = '[Event "a"]\n\n1. e4 {never closed\n\n[Event "b"]\n\n1. d4 *\n';
  const got = splitPgn(text);
  assert.deepEqual(
    got.map((g) => g.line),
    [1, 5],
  );
  const first = normalizeGame(got[0]?.text ?? '');
  assert.deepEqual(first, { ok: false, reason: 'unterminated comment starting at line 3' });
  assert.ok(normalizeGame(got[1]?.text ?? '').ok);
});

test('tag-only games split when a tag name repeats', () => {
  const text = '[Event "a"]\n[Round "1"]\n\n[Event "a"]\n[Round "2"]\n\n[Round "3"]\n';
  assert.deepEqual(
    splitPgn(text).map((g) => g.line),
    [1, 4, 7],
  );
});

test('a tag section of many tags with blank lines between them is read once, not again for each tag', () => {
  // 10,000 distinct tags, each after a blank line: each tag line asks whether the game already has the tag.
  // Reading the game's lines again for each (as before) collected every tag name again for each line: 50
  // million times here. Read once, each name is collected once. Chunks as the import reads them.
  const n = 10_000;
  const tags = Array.from({ length: n }, (_, i) => `[T${i} "v"]\n`).join('\n');
  const text = `[Event "x"]\n\n${tags}\n1. e4 *\n\n[Event "y"]\n\n[T1 "w"]\n\n[Event "z"]\n1. d4 *\n`;
  const splitter = new PgnSplitter();
  const games: RawGame[] = [];
  // The splitter keeps the tag names it has read in a Set: how many it adds is how much it read.
  const add = Set.prototype.add;
  let added = 0;
  Set.prototype.add = function <T>(this: Set<T>, value: T) {
    added++;
    return add.call(this, value) as Set<T>;
  };
  try {
    for (let at = 0; at < text.length; at += 1 << 16)
      games.push(...splitter.push(text.slice(at, at + (1 << 16))));
    games.push(...splitter.end());
  } finally {
    Set.prototype.add = add;
  }
  // The third game starts where its Event tag repeats the second's.
  assert.deepEqual(
    games.map((g) => g.line),
    [1, 2 * n + 5, 2 * n + 9],
  );
  assert.ok(added <= 2 * n, `${added} tag names collected for ${n} tags`);
});

test("a blank line before Black's first move does not start a game; before White's, it does", () => {
  const text =
    '[Event "a"]\n\n1. e4 {The most popular first move.}\n\n1... e5 2. Nf3\n\n1. ... Nc6 *\n\n' +
    '1. d4 {no tags}\n\n1.c4 *\n';
  const games = splitPgn(text);
  assert.deepEqual(
    games.map((g) => g.line),
    [1, 9, 11],
  );
  assert.ok(normalizeGame(games[0]?.text ?? '').ok);
});

test('empty and blank input yield no games', () => {
  assert.deepEqual(splitPgn(''), []);
  assert.deepEqual(splitPgn('\n\n  \r\n'), []);
  assert.deepEqual(splitPgn('% only an escape line\n'), []);
});

// Chunking over every small corpus file: same games as splitting the whole text.
const corpusFiles = existsSync(CORPUS)
  ? ['annotated', 'awkward', 'chess960', 'edge'].flatMap((dir) =>
      readdirSync(join(CORPUS, dir))
        .filter((f) => f.endsWith('.pgn') && statSync(join(CORPUS, dir, f)).size < 500_000)
        .map((f) => join(dir, f)),
    )
  : [];

test('corpus files split the same in random chunks as whole', {
  skip: corpusFiles.length === 0 ? NO_CORPUS : false,
}, () => {
  for (const file of corpusFiles) {
    const text = new TextDecoder('latin1').decode(readFileSync(join(CORPUS, file)));
    const whole = splitPgn(text);
    assert.deepEqual(splitInChunks(text, randomSizes(file.length)), whole, file);
    assert.deepEqual(
      splitInChunks(text, () => 7),
      whole,
      file,
    );
    // And with a limit that many of them pass, joined from their pieces.
    assert.deepEqual(
      joinPieces(splitInChunks(text, randomSizes(file.length + 1), 2000)).map((g) => g.text),
      whole.map((g) => g.text),
      file,
    );
    // Every game's text is the input at its start line.
    const all = text.split(/(?<=\n)/);
    for (const g of whole) assert.ok(g.text.startsWith((all[g.line - 1] ?? '').replace('\uFEFF', '')), file);
  }
});

/**
 * The games of a split with maxGameChars, each oversize one joined from its pieces (which must come in a row,
 * with its line and number), marked by its length.
 */
function joinPieces(pieces: RawGame[]): (RawGame & { pieces?: number })[] {
  const games: (RawGame & { pieces?: number })[] = [];
  let open: (RawGame & { pieces: number }) | undefined;
  for (const piece of pieces) {
    if (open) {
      assert.equal(piece.index, open.index, 'the pieces of one game come in a row');
      assert.equal(piece.line, open.line);
      open.text += piece.text;
      open.pieces++;
      if (piece.part) continue;
      assert.equal(piece.oversize, open.text.length, 'oversize is the whole length');
      const { oversize, longLine, dropped } = piece;
      games.push({ ...open, oversize, ...(longLine && { longLine, dropped }) });
      open = undefined;
      continue;
    }
    if (piece.part) {
      open = { text: piece.text, line: piece.line, index: piece.index, pieces: 1 };
      continue;
    }
    games.push(piece.oversize === undefined ? piece : { ...piece, pieces: 1 });
  }
  assert.equal(open, undefined, 'every game ends');
  return games;
}

test('maxGameChars: a longer game comes in pieces that make its text, the others as without it', () => {
  const inputs = [AWKWARD, readFileSync(new URL('../fixtures/chess/annotated.pgn', import.meta.url), 'utf8')];
  for (const text of inputs) {
    const whole = splitPgn(text);
    // From 2: no run of blank lines between the lines of a game here is longer (a longer one ends its game).
    for (const max of [2, 40, 200, 1000]) {
      for (const sizes of [() => 7, () => 64, randomSizes(max)]) {
        const games = joinPieces(splitInChunks(text, sizes, max));
        assert.deepEqual(
          games.map(({ text, line, index }) => ({ text, line, index })),
          whole.map(({ text, line, index }) => ({ text, line, index })),
          `max ${max}`,
        );
        for (const [i, game] of games.entries())
          assert.equal(game.oversize !== undefined, (whole[i] as RawGame).text.length > max, `max ${max}`);
      }
    }
  }
});

test('maxGameChars: a huge game is handed out as it is read, not held whole', () => {
  const head = '[Event "Huge"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 {';
  const line = `${'analysis '.repeat(8).trim()}\n`;
  const splitter = new PgnSplitter({ maxGameChars: 10_000 });
  const out: RawGame[] = [...splitter.push('[Event "Before"]\n\n1. d4 d5 1-0\n\n'), ...splitter.push(head)];
  let largest = 0;
  for (let i = 0; i < 2000; i++) {
    const got = splitter.push(line.repeat(50));
    for (const piece of got) largest = Math.max(largest, piece.text.length);
    out.push(...got);
  }
  out.push(...splitter.push('} e5 1-0\n\n[Event "After"]\n\n1. c4 1-0\n'), ...splitter.end());
  // Pieces of about a chunk each, after the first one of just over the limit.
  assert.ok(largest < 20_000, `largest piece ${largest}`);
  const games = joinPieces(out);
  assert.deepEqual(
    games.map((g) => [g.index, g.oversize !== undefined, g.text.length > 3_000_000]),
    [
      [1, false, false],
      [2, true, true],
      [3, false, false],
    ],
  );
  assert.ok((games[1]?.pieces ?? 0) > 100);
  assert.ok(games[1]?.text.startsWith(head));
  assert.equal(games[2]?.text, '[Event "After"]\n\n1. c4 1-0\n');
});

test('maxGameChars: a tag section too long still splits where a tag name repeats', () => {
  const tags = Array.from({ length: 300 }, (_, i) => `[Tag${i} "${'v'.repeat(20)}"]\n\n`).join('');
  const text = `${tags}[Tag0 "again"]\n\n1. e4 1-0\n`;
  const whole = splitPgn(text);
  assert.equal(whole.length, 2);
  const games = joinPieces(splitInChunks(text, () => 100, 500));
  assert.deepEqual(
    games.map((g) => [g.text, g.oversize !== undefined]),
    [
      [whole[0]?.text, true],
      [whole[1]?.text, false],
    ],
  );
});

/** The games the splitter makes of texts and long lines (LongLine) pushed in turn, oversize ones joined. */
function splitWith(pushes: (string | LongLine)[], maxGameChars = 1000): (RawGame & { pieces?: number })[] {
  const splitter = new PgnSplitter({ maxGameChars });
  return joinPieces([...pushes.flatMap((push) => splitter.push(push)), ...splitter.end()]);
}

const long = (head: string, bytes = 1 << 30): LongLine => ({ head, bytes, dropped: bytes - head.length });

test('a line too long to read (LongLine) makes its game too large, read to the next tag pair after a blank line', () => {
  const before = '[Event "Before"]\n\n1. d4 d5 1-0\n\n';
  const games = splitWith([
    `${before}[Event "Huge"]\n\n`,
    long('1. e4 {analysis'),
    // What the line held is unknown: it may have closed the comment, or not. A tag pair line without a blank
    // line before it is the game's, as in an unclosed comment.
    '} e5 1-0\n[Event "Swallowed"]\n\n1. c4 1-0\n\n[Event "After"]\n\n1. c4 1-0\n',
  ]);
  assert.deepEqual(
    games.map((g) => [g.index, g.line, g.text, g.oversize, g.longLine, g.dropped]),
    [
      [1, 1, '[Event "Before"]\n\n1. d4 d5 1-0\n', undefined, undefined, undefined],
      [
        2,
        5,
        '[Event "Huge"]\n\n1. e4 {analysis\n} e5 1-0\n[Event "Swallowed"]\n\n1. c4 1-0\n\n',
        73,
        { line: 7, bytes: 1 << 30 },
        (1 << 30) - 15,
      ],
      [3, 13, '[Event "After"]\n\n1. c4 1-0\n', undefined, undefined, undefined],
    ],
  );
});

test("a long escape or comment line between games is the next game's, which it makes too large; nothing else changes", () => {
  for (const line of ['% escape', '; comment']) {
    const games = splitWith([
      '[Event "Before"]\n\n1. d4 d5 1-0\n\n',
      long(line, 5000),
      '[Event "Huge"]\n\n1. e4 1-0\n[Event "After"]\n\n1. c4 1-0\n',
    ]);
    assert.deepEqual(
      games.map((g) => [g.line, g.text, g.oversize !== undefined, g.longLine]),
      [
        [1, '[Event "Before"]\n\n1. d4 d5 1-0\n', false, undefined],
        [5, `${line}\n[Event "Huge"]\n\n1. e4 1-0\n`, true, { line: 5, bytes: 5000 }],
        [9, '[Event "After"]\n\n1. c4 1-0\n', false, undefined],
      ],
      line,
    );
  }
  // In a game, a long escape line is the game's.
  const games = splitWith([
    '[Event "A"]\n\n1. e4\n',
    long('% escape'),
    'e5 1-0\n\n[Event "B"]\n\n1. c4 1-0\n',
  ]);
  assert.deepEqual(
    games.map((g) => [g.text, g.oversize !== undefined]),
    [
      ['[Event "A"]\n\n1. e4\n% escape\ne5 1-0\n', true],
      ['[Event "B"]\n\n1. c4 1-0\n', false],
    ],
  );
});

test('maxGameChars: blank, escape and comment lines longer together than a game are not held', () => {
  const splitter = new PgnSplitter({ maxGameChars: 1000 });
  // Blank lines after a game end it as soon as they pass the limit, rather than when the next game starts.
  const game = '[Event "A"]\n\n1. e4 *\n';
  assert.deepEqual(splitter.push(game), []);
  assert.deepEqual(splitter.push('\n'.repeat(999)), []);
  assert.deepEqual(splitter.push(' \n'.repeat(10)), [{ text: game, line: 1, index: 1 }]);
  // Escape lines past the limit are the next game's, too large: handed out in pieces as they come.
  const escapes = '% an escape line\n'.repeat(100);
  const pieces = splitter.push(escapes);
  assert.deepEqual(
    pieces.map((p) => [p.line, p.index, p.part, p.text.length]),
    [[1013, 2, true, escapes.length]],
  );
  const rest = [...splitter.push('[Event "B"]\n\n1. d4 *\n\n[Event "C"]\n\n1. c4 *\n'), ...splitter.end()];
  assert.deepEqual(
    rest.map((g) => [g.index, g.text, g.oversize]),
    [
      [2, '[Event "B"]\n\n1. d4 *\n', escapes.length + 21],
      [3, '[Event "C"]\n\n1. c4 *\n', undefined],
    ],
  );
});

test('a line starting with CUT_NOTE marks its game as cut short, wherever it is', () => {
  const note = `${CUT_NOTE}: 1,000 more bytes of this game are left out\n`;
  const games = splitPgn(
    `[Event "A"]\n\n1. e4 {analysis\n${note}\n[Event "B"]\n\n1. d4 *\n${note}\n[Event "C"]\n\n1. c4 *\n`,
  );
  assert.deepEqual(
    games.map((g) => [g.index, g.cut]),
    [
      [1, 4],
      [2, 9],
      [3, undefined],
    ],
  );
  assert.ok(games[1]?.text.endsWith(note));
});

test('maxGameChars: a tag section of more tags than the splitter remembers still splits where an early tag repeats', () => {
  const tags = Array.from({ length: 20_000 }, (_, i) => `[Tag${i} "v"]\n`).join('');
  const games = splitInChunks(`${tags}\n[Tag0 "again"]\n\n1. e4 1-0\n`, () => 4096, 1000);
  assert.deepEqual(
    joinPieces(games).map((g) => [g.text.startsWith('[Tag0 "v"]'), g.oversize !== undefined]),
    [
      [true, true],
      [false, false],
    ],
  );
});
