// The inputs of the import fuzzer (fuzz.test.ts): real PGN from the fixtures and the shared corpus, mutated
// deterministically from a seed. Not a test file itself.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { splitPgn } from '../../src/chess/index.ts';
import { CORPUS } from './corpus.ts';
import { FIXTURES } from './harness.ts';

/** A small seeded PRNG (sfc32): the same seed gives the same inputs on every machine. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 16; i++) this.next();
  }

  /** A uniform 32-bit unsigned integer. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.next() / 2 ** 32) * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() / 2 ** 32 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

/** A PGN source to mutate: its bytes as they are on disk, and its games' byte ranges (cut by our splitter). */
export interface Seed {
  name: string;
  bytes: Buffer;
  /** Start of each game, and the end of the last, as byte offsets. */
  cuts: number[];
}

/** Corpus files above this size are not seeds (the large/ folder: its small files are, though). */
const MAX_SEED_BYTES = 200_000;

function pgnFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.pgn'))
    .sort()
    .map((f) => join(folder, f));
}

function seedOf(name: string, bytes: Buffer): Seed {
  // Latin-1 keeps one character per byte, so the splitter's offsets are byte offsets; no character it cuts at
  // is outside ASCII.
  const text = bytes.toString('latin1');
  const cuts: number[] = [];
  let at = 0;
  for (const game of splitPgn(text)) {
    const start = text.indexOf(game.text, at);
    cuts.push(start);
    at = start + game.text.length;
  }
  cuts.push(text.length);
  return { name, bytes, cuts };
}

/** The seeds: every fixture, and the shared corpus's files up to MAX_SEED_BYTES (none when it is absent). */
export function loadSeeds(): { seeds: Seed[]; corpus: boolean } {
  const files = pgnFiles(FIXTURES);
  const corpus = pgnFiles(process.env.CHESSPORT_FUZZ_CORPUS ?? CORPUS).filter(
    (f) => statSync(f).size <= MAX_SEED_BYTES,
  );
  const seeds = [...files, ...corpus]
    .map((f) => seedOf(f.replace(/^.*\/(fixtures|pgn)\//, ''), readFileSync(f)))
    .filter((s) => s.bytes.length > 0);
  return { seeds, corpus: corpus.length > 0 };
}

/** One input of the fuzzer: its bytes and what was done to make them (to reproduce and to count by kind). */
export interface Input {
  kind: string;
  detail: string;
  bytes: Buffer;
}

/** A run of 1-6 consecutive games of a seed (all of a small one), byte for byte. */
function window(rng: Rng, seed: Seed): Buffer {
  const games = seed.cuts.length - 1;
  if (games <= 0) return seed.bytes;
  if (seed.bytes.length <= 4096) return seed.bytes;
  const n = rng.range(1, Math.min(6, games));
  const first = rng.int(games - n + 1);
  // From the first game's start to the next one's: the blank and escape lines after the last come along.
  const start = first === 0 ? 0 : (seed.cuts[first] as number);
  return seed.bytes.subarray(start, seed.cuts[first + n] as number);
}

const LF = 10;

function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = bytes.indexOf(LF); i !== -1 && i + 1 < bytes.length; i = bytes.indexOf(LF, i + 1))
    starts.push(i + 1);
  return starts;
}

function insert(bytes: Buffer, at: number, what: Buffer | string): Buffer {
  const add = typeof what === 'string' ? Buffer.from(what, 'latin1') : what;
  return Buffer.concat([bytes.subarray(0, at), add, bytes.subarray(at)]);
}

function replace(bytes: Buffer, from: number, to: number, what: Buffer | string): Buffer {
  const add = typeof what === 'string' ? Buffer.from(what, 'latin1') : what;
  return Buffer.concat([bytes.subarray(0, from), add, bytes.subarray(to)]);
}

type Place = 'tag' | 'comment' | 'variation' | 'move' | 'number' | 'nag' | 'line-comment' | 'blank';

/**
 * Where the bytes are, by kind of place: inside a tag pair, a brace comment, a variation, a move, a move
 * number, a NAG, a ';' comment, or a blank between tokens. A rough reading (no chess), good enough to aim.
 */
function places(bytes: Buffer): Map<Place, number[]> {
  const found = new Map<Place, number[]>();
  const add = (place: Place, at: number) => {
    const list = found.get(place);
    if (list) list.push(at);
    else found.set(place, [at]);
  };
  let inTag = false;
  let inBrace = false;
  let inLineComment = false;
  let depth = 0;
  let lineStart = true;
  let token: 'move' | 'number' | 'nag' | null = null;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (c === LF) {
      inTag = false;
      inLineComment = false;
      lineStart = true;
      token = null;
      continue;
    }
    const atLineStart = lineStart;
    lineStart = false;
    if (inBrace) {
      add('comment', i);
      if (c === 0x7d) inBrace = false;
      continue;
    }
    if (inLineComment) {
      add('line-comment', i);
      continue;
    }
    if (inTag) {
      add('tag', i);
      if (c === 0x5d) inTag = false;
      continue;
    }
    if (atLineStart && c === 0x5b) {
      inTag = true;
      add('tag', i);
      continue;
    }
    if (c === 0x7b) {
      inBrace = true;
      token = null;
      add('comment', i);
      continue;
    }
    if (c === 0x3b) {
      inLineComment = true;
      add('line-comment', i);
      continue;
    }
    if (c === 0x28) depth++;
    else if (c === 0x29 && depth > 0) depth--;
    if (c === 0x20 || c === 0x09 || c === 0x0d) {
      token = null;
      add('blank', i);
      continue;
    }
    if (token === null) token = c === 0x24 ? 'nag' : c >= 0x30 && c <= 0x39 ? 'number' : 'move';
    if (token === 'number' && c !== 0x2e && (c < 0x30 || c > 0x39)) token = 'move';
    add(depth > 0 && token === 'move' ? 'variation' : token, i);
  }
  return found;
}

/** A position of a kind, or anywhere when the bytes hold no such place. */
function placeOf(rng: Rng, bytes: Buffer, kinds: readonly Place[]): { place: string; at: number } {
  const found = places(bytes);
  const present = kinds.filter((k) => found.has(k));
  if (present.length === 0) return { place: 'anywhere', at: rng.int(bytes.length + 1) };
  const place = rng.pick(present);
  return { place, at: rng.pick(found.get(place) as number[]) };
}

/** Bytes that are not UTF-8: overlong forms, surrogates, values past U+10FFFF, stray and cut sequences. */
const BAD_UTF8: number[][] = [
  [0xc0, 0x80], // overlong NUL
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf], // overlong '/'
  [0xe0, 0x9f, 0xbf],
  [0xf0, 0x80, 0x80, 0xaf],
  [0xed, 0xa0, 0x80], // a surrogate
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xf5],
  [0xff],
  [0xfe, 0xff],
  [0x80],
  [0xbf, 0xbf],
  [0xe2, 0x82], // cut sequence
  [0xf0, 0x9f, 0x8e],
  [0xe9], // Latin-1 e acute
  [0xc3, 0xa9, 0xe9], // UTF-8 then Latin-1
];
const BOM = [0xef, 0xbb, 0xbf];
const SPECIAL_BYTES = [
  0x00, 0x0a, 0x0d, 0x7b, 0x7d, 0x28, 0x29, 0x5b, 0x5d, 0x22, 0x5c, 0x25, 0x3b, 0x24, 0x2a,
];

/** Words of engine-comment look, joined to about `size` characters. */
function words(size: number): string {
  const parts = [
    'd=30',
    'pd=Nf6',
    'mt=00:01:02',
    'tl=01:02:03',
    's=1234kN/s',
    'n=1234567',
    'pv=e4',
    'tb=0',
    'R50=50',
  ];
  let text = '';
  for (let i = 0; text.length < size; i++) text += `${parts[i % parts.length]} `;
  return text.trimEnd();
}

const MB = 1 << 20;

/** `big`: whether the largest sizes may be chosen (long runs), or only those quick to check (`npm test`). */
type Mutation = (rng: Rng, bytes: Buffer, seeds: Seed[], big: boolean) => { detail: string; bytes: Buffer };

/** The mutations, by kind. Each takes the bytes of a run of games and returns the mutated bytes. */
export const MUTATIONS: Record<string, Mutation> = {
  'bit flips': (rng, bytes) => {
    const out = Buffer.from(bytes);
    const n = rng.range(1, 8);
    for (let k = 0; k < n && out.length > 0; k++) {
      const at = rng.int(out.length);
      out[at] = (out[at] as number) ^ (1 << rng.int(8));
    }
    return { detail: `${n} bits`, bytes: out };
  },
  'special bytes': (rng, bytes) => {
    const out = Buffer.from(bytes);
    const n = rng.range(1, 6);
    for (let k = 0; k < n && out.length > 0; k++) out[rng.int(out.length)] = rng.pick(SPECIAL_BYTES);
    return { detail: `${n} bytes`, bytes: out };
  },
  deletion: (rng, bytes) => {
    const from = rng.int(bytes.length);
    const to = Math.min(bytes.length, from + rng.pick([1, 2, 5, 20, 200, 2000]));
    return { detail: `${from}-${to}`, bytes: replace(bytes, from, to, '') };
  },
  duplication: (rng, bytes) => {
    const from = rng.int(bytes.length);
    const to = Math.min(bytes.length, from + rng.pick([1, 3, 10, 80, 500, 5000]));
    const at = rng.chance(0.5) ? to : rng.int(bytes.length + 1);
    return {
      detail: `${from}-${to} at ${at}`,
      bytes: insert(bytes, at, Buffer.from(bytes.subarray(from, to))),
    };
  },
  truncation: (rng, bytes) => {
    const { place, at } = placeOf(rng, bytes, [
      'tag',
      'comment',
      'variation',
      'move',
      'number',
      'nag',
      'line-comment',
      'blank',
    ]);
    return { detail: `in ${place} at ${at}`, bytes: bytes.subarray(0, at) };
  },
  'line start': (rng, bytes) => {
    const starts = lineStarts(bytes);
    const n = rng.range(1, 3);
    let out = bytes;
    const added: string[] = [];
    for (let k = 0; k < n; k++) {
      const what = rng.pick(['{', '}', '(', ')', ';', '%', '{ ', ') ', '%%', ';;']);
      added.push(what);
      out = insert(out, rng.pick(starts) + k * 2, what);
    }
    return { detail: added.join(' '), bytes: out };
  },
  'tag line in movetext': (rng, bytes) => {
    const { at } = placeOf(rng, bytes, ['move', 'variation', 'comment', 'blank']);
    const line = rng.pick([
      '\n[Event "inserted"]\n',
      '\n[Event "inserted"]',
      '[Event "same line"] ',
      '\n[\n',
      '\n[Broken "value\n',
      '\n[%clk 0:01:00]\n',
      '\n\n[Site "after a blank line"]\n',
      '\n[White "x"] 1. e4 *\n',
    ]);
    return { detail: JSON.stringify(line), bytes: insert(bytes, at, line) };
  },
  NUL: (rng, bytes) => {
    const at = rng.int(bytes.length + 1);
    return { detail: `at ${at}`, bytes: insert(bytes, at, Buffer.alloc(rng.range(1, 3))) };
  },
  'lone CR': (rng, bytes) => {
    const out = Buffer.from(bytes);
    const lfs: number[] = [];
    for (let i = out.indexOf(LF); i !== -1; i = out.indexOf(LF, i + 1)) lfs.push(i);
    if (lfs.length > 0 && rng.chance(0.6)) {
      // Some line ends become lone CRs (an old Mac file, or a mix).
      const all = rng.chance(0.3);
      for (const i of lfs) if (all || rng.chance(0.3)) out[i] = 0x0d;
      return { detail: all ? 'every LF' : 'some LFs', bytes: out };
    }
    const at = rng.int(out.length + 1);
    return {
      detail: `inserted at ${at}`,
      bytes: insert(out, at, rng.pick(['\r', '\r\r', '\r\r\n', '\n\r'])),
    };
  },
  'invalid UTF-8': (rng, bytes) => {
    let out = bytes;
    const n = rng.range(1, 4);
    for (let k = 0; k < n; k++) {
      const { at } = placeOf(rng, out, ['tag', 'comment', 'move', 'blank', 'line-comment']);
      out = insert(out, at, Buffer.from(rng.pick(BAD_UTF8)));
    }
    return { detail: `${n} sequences`, bytes: out };
  },
  'BOM mid-file': (rng, bytes) => {
    const starts = lineStarts(bytes);
    const at = rng.chance(0.6) ? rng.pick(starts) : rng.int(bytes.length + 1);
    const n = rng.range(1, 2);
    return { detail: `${n} at ${at}`, bytes: insert(bytes, at, Buffer.from(Array(n).fill(BOM).flat())) };
  },
  'long line': (rng, bytes) => {
    const size = rng.pick([MB, MB + 7, 64 * 1024]);
    const variant = rng.pick([
      'comment',
      'comment-word',
      'tag',
      'token',
      'moves',
      'blank',
      'semicolon',
      'escape',
      'quote',
    ]);
    const { at } = placeOf(rng, bytes, variant === 'tag' ? ['tag'] : ['blank', 'move']);
    let text: string;
    switch (variant) {
      case 'comment':
        text = ` {${words(size)}} `;
        break;
      case 'comment-word':
        text = ` {${'x'.repeat(size)}} `;
        break;
      case 'tag':
        return { detail: `${variant} ${size}`, bytes: insert(bytes, at, 'v'.repeat(size)) };
      case 'token':
        text = ` ${'e'.repeat(size)} `;
        break;
      case 'moves':
        // A legal line from the start position, all on one line.
        text = `\n${'Nf3 Nf6 Ng1 Ng8 '.repeat(Math.ceil(size / 16))}\n`;
        return {
          detail: `${variant} ${size}`,
          bytes: insert(bytes, lineStarts(bytes).find((s) => s >= at) ?? bytes.length, text),
        };
      case 'blank':
        text = `\n${' '.repeat(size)}\n`;
        break;
      case 'semicolon':
        text = `;${'s'.repeat(size)}\n`;
        break;
      case 'escape':
        return {
          detail: `${variant} ${size}`,
          bytes: insert(bytes, rng.pick(lineStarts(bytes)), `%${'p'.repeat(size)}\n`),
        };
      default:
        text = `\n[Event "${'q'.repeat(size)}\n`;
    }
    return { detail: `${variant} ${size}`, bytes: insert(bytes, at, text) };
  },
  'deep nesting': (rng, bytes, _seeds, big) => {
    const levels = rng.pick([10_000, 1000, 101, 100, 99]);
    const variant = rng.pick(['moves', 'comments', 'opens', 'closes', 'siblings', 'empty']);
    let text: string;
    switch (variant) {
      case 'moves':
        text = `${'(1. d4 '.repeat(levels)}${')'.repeat(levels)}`;
        break;
      case 'comments':
        text = `${'( {a comment} 1. d4 {another} '.repeat(levels)}${')'.repeat(levels)}`;
        break;
      case 'opens':
        text = '('.repeat(levels);
        break;
      case 'closes':
        text = ')'.repeat(levels);
        break;
      case 'siblings':
        // Kept (every one is legal): 10,000 of them take a while to check, export and read back.
        text = '(1. d4) '.repeat(big ? levels : Math.min(levels, 1000));
        break;
      default:
        text = `${'( '.repeat(levels)}${') '.repeat(levels)}`;
    }
    // After White's first move when there is one: the variations are alternatives to it.
    const first = /\b1\. ?[a-hNBRQKO][^\s)]*/.exec(bytes.toString('latin1'));
    const at = first ? first.index + first[0].length : rng.int(bytes.length + 1);
    return { detail: `${variant} ${levels}`, bytes: insert(bytes, at, ` ${text} `) };
  },
  'huge move number': (rng, bytes) => {
    const text = bytes.toString('latin1');
    const numbers = [...text.matchAll(/(?<![\w.])\d+(?=\.)/g)];
    const big = rng.pick([
      '99999999999999999999',
      '9007199254740993',
      '4294967296',
      '9'.repeat(1000),
      '0',
      '00001',
    ]);
    if (numbers.length === 0)
      return { detail: `none; prefix ${big.length}`, bytes: insert(bytes, 0, `${big}. `) };
    const m = rng.pick(numbers);
    return {
      detail: `${m[0]} -> ${big.length} digits`,
      bytes: replace(bytes, m.index, m.index + m[0].length, big),
    };
  },
  'odd text': (rng, bytes) => {
    // Characters that mean something to the splitter, the parser or the export writer, inside comments, tag
    // values and ';' comments, where they are text, or between movetext tokens, where they are not.
    const odd = [
      '}',
      '{',
      '"',
      '\\',
      '\\"',
      ']',
      '[',
      '%',
      ';',
      '$1',
      '1-0',
      '*',
      '(',
      ')',
      '\t',
      '\u00a0',
      '\u2028',
      '\ufeff',
      '\u0001',
      '\u{1f389}',
      'e.p.',
      '\n%',
      '\n;',
      '\n\n',
      '\n[Event "x"]',
      ' '.repeat(100),
      'w'.repeat(90),
      `x${'\u{1f389}'.repeat(30)}`, // quoted in a reason or warning, clipped after 40 UTF-16 units
    ];
    let out = bytes;
    const n = rng.range(1, 4);
    const added: string[] = [];
    for (let k = 0; k < n; k++) {
      const what = rng.pick(odd);
      added.push(JSON.stringify(what));
      const { at } = placeOf(rng, out, ['comment', 'tag', 'line-comment', 'blank']);
      out = insert(out, at, Buffer.from(what));
    }
    return { detail: added.join(' '), bytes: out };
  },
  'move forms': (rng, bytes) => {
    // A move written another way: coordinates, other castling, promotion and check marks, suffixes, nulls.
    const text = bytes.toString('latin1');
    const moves = [
      ...text.matchAll(
        /(?<=[\s.)(])([NBRQK]?[a-h]?[1-8]?x?[a-h][1-8](?:=[NBRQ])?|O-O(?:-O)?)[+#]?(?=[\s)(])/g,
      ),
    ];
    if (moves.length === 0) return { detail: 'no move', bytes };
    const m = rng.pick(moves);
    const san = m[1] as string;
    const forms = [
      'e2e4',
      'e2-e4',
      'e7e8q',
      'e7e8Q',
      'e1g1',
      'e1h1',
      'e1c1',
      '0-0',
      'o-o',
      '0-0-0',
      'O-O-O+',
      '--',
      'Z0',
      '0000',
      '@@@@',
      'P@e4',
      `${san}!!`,
      `${san}?!`,
      `${san}+!`,
      `${san}#?`,
      `${san}!+`,
      `${san} !`,
      `${san}e.p.`,
      `${san}=Q`,
      `${san}(Q)`,
      `${san}:`,
      `${san}N`,
      `P${san}`,
      san.toLowerCase(),
      `${san}$1`,
      `${san}+-`,
      `${san}++`,
      `${san}?!?`,
      `${san}\u2026`,
      `1.${san}`,
      `1...${san}`,
      `1\u2026${san}`,
    ];
    const form = rng.pick(forms);
    return {
      detail: `${san} -> ${form}`,
      bytes: replace(bytes, m.index, m.index + m[0].length, Buffer.from(form)),
    };
  },
  'FEN tags': (rng, bytes) => {
    const fen = rng.pick([
      'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1',
      'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1',
      'bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w FCfc - 0 1',
      'bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w KQkq - 0 1',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 99999999999',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999 0',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 4294967297',
      '8/8/8/8/8/8/8/K6k w - - 0 1',
      '8/8/8/8/8/8/8/8 w - - 0 1',
      '4k3/8/8/8/8/8/8/4K2R w K - 0 1',
      '4k3/8/8/8/8/8/8/4K2R w Qk - 0 1',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -',
      'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR',
      '',
      ' ',
      'x'.repeat(300),
    ]);
    const setUp = rng.pick(['[SetUp "1"]\n', '[SetUp "0"]\n', '']);
    const variant = rng.pick([
      '',
      '',
      '[Variant "Chess960"]\n',
      '[Variant "From Position"]\n',
      '[Variant "Atomic"]\n',
    ]);
    const starts = lineStarts(bytes).filter((i) => bytes[i] === 0x5b);
    const at = starts.length > 0 ? rng.pick(starts) : 0;
    return {
      detail: `${setUp}${variant}FEN ${fen}`,
      bytes: insert(bytes, at, `${setUp}${variant}[FEN "${fen}"]\n`),
    };
  },
  'tag across lines': (rng, bytes) => {
    // A tag pair broken over lines at its blanks ("[Event\n\"x\"\n]"): still one tag pair to the parser.
    const text = bytes.toString('latin1');
    const tags = [...text.matchAll(/^\[[A-Za-z0-9_]+ "(?:[^"\\\n]|\\.)*"\]/gm)];
    if (tags.length === 0) return { detail: 'no tag', bytes };
    let out = text;
    const n = rng.range(1, 3);
    for (const m of [...tags].sort((a, b) => b.index - a.index).slice(0, n)) {
      const broken = m[0]
        .replace(/^\[(\S+) /, rng.chance(0.5) ? '[$1\n' : '[$1 ')
        .replace(/"\]$/, rng.chance(0.5) ? '"\n]' : '"\n  ]');
      out = out.slice(0, m.index) + broken + out.slice(m.index + m[0].length);
    }
    return { detail: `${n} tags`, bytes: Buffer.from(out, 'latin1') };
  },
  annotations: (rng, bytes) => {
    // Comments, NAGs and legal variations added to a game's moves: a variation repeats the moves it stands
    // beside ("Nf3 (Nf3 Nf6 {...}) Nf6"), so it replays, and the export has all of it to write.
    const text = bytes.toString('latin1');
    const moves = [
      ...text.matchAll(/(?<=[\s.])([NBRQK]?[a-h]?[1-8]?x?[a-h][1-8](?:=[NBRQ])?|O-O(?:-O)?)[+#]?(?=\s)/g),
    ];
    if (moves.length < 2) return { detail: 'no moves', bytes };
    const comment = () => {
      const word = () =>
        rng.pick([
          'x'.repeat(rng.range(1, 120)),
          '[%clk 0:01:02]',
          '[%eval -1.23,20]',
          'a',
          '(',
          ')',
          '$3',
          '%',
          ';',
          '{',
          'e4',
          '1-0',
          '*',
          '"quoted"',
          '\\',
          'Ä',
        ]);
      return `{${Array.from({ length: rng.range(0, 12) }, word).join(rng.pick([' ', '  ', '\n', ' \n ']))}}`;
    };
    const nag = () => rng.pick(['$1', '$14', '$255', '!', '?!', '+-', '=', 'N', '$0']);
    const variation = (i: number, depth: number): string => {
      const length = rng.range(1, 4);
      const parts: string[] = [];
      if (rng.chance(0.3)) parts.push(comment());
      if (rng.chance(0.1)) parts.push(nag());
      for (let k = i; k < Math.min(moves.length, i + length); k++) {
        parts.push((moves[k] as RegExpExecArray)[0]);
        if (rng.chance(0.3)) parts.push(nag());
        if (rng.chance(0.3)) parts.push(comment());
        if (depth < 4 && rng.chance(0.25)) parts.push(variation(k, depth + 1));
      }
      return `(${parts.join(' ')})`;
    };
    let out = text;
    const n = rng.range(1, 6);
    const added: number[] = [];
    for (const i of Array.from({ length: n }, () => rng.int(moves.length)).sort((a, b) => b - a)) {
      const m = moves[i] as RegExpExecArray;
      const after = m.index + m[0].length;
      const what = rng.pick([() => variation(i, 0), comment, nag])();
      out = `${out.slice(0, after)} ${what}${out.slice(after)}`;
      added.push(i);
    }
    return { detail: `at moves ${added.join(', ')}`, bytes: Buffer.from(out, 'latin1') };
  },
  'many NAGs': (rng, bytes) => {
    const { at } = placeOf(rng, bytes, ['blank']);
    const nag = rng.pick(['$1 ', '$255 ', '!? ', '$0 ', '$256 ', '$99999999999999999999 ']);
    const n = rng.pick([10_000, 1, 3]);
    return { detail: `${n} x ${nag}`, bytes: insert(bytes, at, ` ${nag.repeat(n)}`) };
  },
  'empty games': (rng, bytes) => {
    const starts = lineStarts(bytes);
    const what = rng.pick([
      '\n\n\n\n',
      '*\n\n*\n\n',
      '1-0\n\n0-1\n\n1/2-1/2\n\n',
      '* * *\n',
      '[Event ""]\n\n',
      '[Event "tags only"]\n[Site "?"]\n\n',
      '\n\n[Event "a"]\n\n[Event "b"]\n\n',
      '%\n;\n\n',
      '{}\n\n',
      '()\n\n',
    ]);
    const at = rng.chance(0.5) ? 0 : rng.pick(starts);
    return { detail: `${JSON.stringify(what)} at ${at}`, bytes: insert(bytes, at, what) };
  },
  splice: (rng, bytes, seeds) => {
    const other = window(rng, rng.pick(seeds));
    const cut = rng.int(bytes.length + 1);
    const from = rng.int(other.length + 1);
    return {
      detail: `${cut} + other from ${from}`,
      bytes: Buffer.concat([bytes.subarray(0, cut), other.subarray(from)]),
    };
  },
  'chunk boundary': (rng, bytes) => {
    // The file is read in 1 MB pieces: the bytes that decide a line end or a character land on the seam.
    const special = rng.pick([
      [0x0d],
      [0x0d, 0x0a],
      [0x0a, 0x0d],
      BOM,
      [0xc3, 0xa9],
      [0xe2, 0x82, 0xac],
      [0xf0, 0x9f, 0x8e, 0x89],
      [0xe9, 0x0a],
      [0x0d, 0xef, 0xbb, 0xbf],
    ]);
    const offset = rng.range(-special.length, 1);
    const copies: Buffer[] = [];
    let size = 0;
    const separator = Buffer.from('\n\n');
    while (size < MB + 4096) {
      copies.push(bytes, separator);
      size += bytes.length + 2;
    }
    const at = MB + offset;
    if (rng.chance(0.5)) {
      // Anywhere: maybe inside a line.
      const all = Buffer.concat(copies);
      return {
        detail: `${Buffer.from(special).toString('hex')} at ${at}`,
        bytes: Buffer.concat([all.subarray(0, at), Buffer.from(special), all.subarray(at)]),
      };
    }
    // At a line start: an escape line (ignored) between two copies fills the gap up to the seam.
    let before = 0;
    let k = 0;
    while (k < copies.length && before + (copies[k] as Buffer).length + 2 <= at - 2) {
      before += (copies[k] as Buffer).length + 2;
      k += 2;
    }
    const fill = Buffer.from(`%${'-'.repeat(Math.max(0, at - before - 2))}\n`);
    return {
      detail: `${Buffer.from(special).toString('hex')} at line start ${at}`,
      bytes: Buffer.concat([...copies.slice(0, k), fill, Buffer.from(special), ...copies.slice(k)]),
    };
  },
  'many warnings': (rng, bytes, _seeds, big) => {
    const n = rng.pick(big ? [600_000, 200_000, 70_000, 1000] : [70_000, 1000]);
    const variant = rng.pick(['tags', 'variations']);
    const text =
      variant === 'tags'
        ? `${Array.from({ length: n }, (_, i) => `[Annotator "${i}"]`).join('\n')}\n\n1. e4 *\n\n`
        : `[Event "cut variations"]\n\n1. e4 ${'(1. Ke2) '.repeat(n)}*\n\n`;
    return { detail: `${variant} ${n}`, bytes: Buffer.concat([Buffer.from(text), bytes]) };
  },
  'many games': (rng, bytes, _seeds, big) => {
    const n = rng.pick(big ? [30_000, 5000] : [5000]);
    const game = rng.pick(['1. e4 *\n', '*\n', '[Event "x"]\n\n1. d4 1-0\n\n', '1. e4 e4 *\n']);
    return {
      detail: `${n} x ${JSON.stringify(game)}`,
      bytes: Buffer.concat([bytes, Buffer.from(game.repeat(n))]),
    };
  },
  'no line end': (rng, bytes) => {
    // Megabytes without a line end: a file whose games are on one line (HTML exports).
    const flat = Buffer.from(bytes.toString('latin1').replace(/\r?\n/g, ' '), 'latin1');
    const copies = Math.ceil((rng.pick([2, 3]) * MB) / Math.max(1, flat.length));
    return { detail: `${copies} copies`, bytes: Buffer.concat(Array(copies).fill(flat)) };
  },
};

/** Mutations cheap enough to stack: several in one input. */
const STACKABLE = [
  'bit flips',
  'special bytes',
  'deletion',
  'duplication',
  'truncation',
  'line start',
  'tag line in movetext',
  'NUL',
  'lone CR',
  'invalid UTF-8',
  'BOM mid-file',
  'huge move number',
  'empty games',
  'splice',
  'odd text',
  'move forms',
  'FEN tags',
  'tag across lines',
  'annotations',
];
/** Mutations that make inputs of megabytes (or take long to check): fewer of them. */
export const HEAVY = new Set(['long line', 'chunk boundary', 'many warnings', 'many games', 'no line end']);

/** The kinds of mutation that make inputs of kilobytes: each input of them is quick to import. */
export const LIGHT = Object.keys(MUTATIONS).filter((k) => !HEAVY.has(k));

/**
 * The kind of input number `n` of a run: one in `heavyEvery` of a heavy kind, the heavy kinds in turn; of the
 * others, one in four a stack of 2-5 cheap mutations ("havoc"), the rest each light kind in turn.
 */
export function kindOf(n: number, heavyEvery: number): string {
  const heavy = (k: number) => k % heavyEvery === 5;
  if (heavy(n)) return [...HEAVY][Math.floor(n / heavyEvery) % HEAVY.size] as string;
  if (n % 4 === 3) return 'havoc';
  let light = 0; // the inputs of light kinds before this one
  for (let k = 0; k < n; k++) if (!heavy(k) && k % 4 !== 3) light++;
  return LIGHT[light % LIGHT.length] as string;
}

/** The input number `n` of the run with seed `seed`, of a kind (kindOf): the same three give the same bytes. */
export function makeInput(seeds: Seed[], seed: number, n: number, kind: string, big = true): Input {
  const rng = new Rng(seed * 1_000_003 + n);
  const source = rng.pick(seeds);
  let bytes: Buffer = Buffer.from(window(rng, source));
  if (kind === 'havoc') {
    const steps: string[] = [];
    for (let k = rng.range(2, 5); k > 0; k--) {
      const step = rng.pick(STACKABLE);
      const out = (MUTATIONS[step] as Mutation)(rng, bytes, seeds, big);
      steps.push(`${step} (${out.detail})`);
      bytes = out.bytes;
    }
    return { kind, detail: `${source.name}: ${steps.join(', ')}`, bytes };
  }
  const out = (MUTATIONS[kind] as Mutation)(rng, bytes, seeds, big);
  return { kind, detail: `${source.name}: ${out.detail}`, bytes: out.bytes };
}
