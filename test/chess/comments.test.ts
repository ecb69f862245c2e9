// Comment cleaning (comments.ts cleanComment) skips the rewrite when a comment is already clean; the skip must
// never change the result: cleaned text is always `\s+` collapsed to one space, trimmed, and '}' made ')'.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanComment } from '../../src/chess/comments.ts';
import { parseGame } from '../../src/chess/parse.ts';

const reference = (raw: string) => raw.replace(/\s+/g, ' ').trim().replace(/\}/g, ')');

/** Each UTF-16 code unit but those `skip` names, alone, inside text, doubled and at either end. */
function* unitPlacements(skip: (c: number) => boolean = () => false): Generator<[string, string]> {
  for (let c = 0; c < 0x10000; c++) {
    if (skip(c)) continue;
    const ch = String.fromCharCode(c);
    const name = `U+${c.toString(16).padStart(4, '0')}`;
    for (const raw of [
      ch,
      `a${ch}b`,
      `a${ch}${ch}b`,
      `a ${ch}b`,
      `${ch}ab`,
      `ab${ch}`,
      ` ${ch} `,
      ` a${ch} `,
    ])
      yield [raw, `${name} in ${JSON.stringify(raw)}`];
  }
}

/** The pieces of random comments: white space of many kinds, and text. */
const SPACES = [' ', ' ', '\t', '\n', '\r\n', '\u00a0', '\u3000'];
const WORDS = ['e4', '+0.35/21', 'é', '[%clk 1:59:58]'];

/** 20,000 strings of up to 11 pieces of the alphabet, the same ones for the same seed. */
function* randomTexts(alphabet: string[], seed: number): Generator<string> {
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 20_000; i++) {
    const length = Math.floor(random() * 12);
    yield Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  }
}

test('every UTF-16 code unit, alone, inside text, doubled and at either end, is cleaned as \\s says', () => {
  for (const [raw, where] of unitPlacements()) assert.equal(cleanComment(raw), reference(raw), where);
});

test('random comments of spaces, tabs, line breaks, braces and text clean as the reference', () => {
  const alphabet = [...SPACES, '}', ...WORDS];
  for (const raw of randomTexts(alphabet, 42))
    assert.equal(cleanComment(raw), reference(raw), JSON.stringify(raw));
});

// The parser takes a brace comment that is already clean but for a space at either end without cleanComment
// (parse.ts braceComment): what it keeps must be what cleanComment makes of the comment.
const commentOf = (raw: string): string => {
  const r = parseGame(`1. e4 {${raw}} *`);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.game.moves[0]?.comments?.join('|') ?? '';
};

test('every UTF-16 code unit in a brace comment, as the parser reads it, is cleaned as \\s says', () => {
  // '}' ends the comment
  for (const [raw, where] of unitPlacements((c) => c === 0x7d))
    assert.equal(commentOf(raw), reference(raw), where);
});

test('random brace comments of spaces, tabs and line breaks read as the reference cleans them', () => {
  const alphabet = [...SPACES, ' ', ...WORDS];
  for (const raw of randomTexts(alphabet, 7))
    assert.equal(commentOf(raw), reference(raw), JSON.stringify(raw));
});
