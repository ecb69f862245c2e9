// Comment cleaning (parse.ts cleanComment) skips the rewrite when a comment is already clean; the skip must
// never change the result: cleaned text is always `\s+` collapsed to one space, trimmed, and '}' made ')'.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanComment, parseGame } from '../../src/chess/parse.ts';

const reference = (raw: string) => raw.replace(/\s+/g, ' ').trim().replace(/\}/g, ')');

test('every UTF-16 code unit, alone, inside text, doubled and at either end, is cleaned as \\s says', () => {
  for (let c = 0; c < 0x10000; c++) {
    const ch = String.fromCharCode(c);
    for (const raw of [ch, `a${ch}b`, `a${ch}${ch}b`, `a ${ch}b`, `${ch}ab`, `ab${ch}`]) {
      assert.equal(
        cleanComment(raw),
        reference(raw),
        `U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(raw)}`,
      );
    }
  }
});

test('random comments of spaces, tabs, line breaks, braces and text clean as the reference', () => {
  const alphabet = [
    ' ',
    ' ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u3000',
    '}',
    'e4',
    '+0.35/21',
    'é',
    '[%clk 1:59:58]',
  ];
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 20_000; i++) {
    const length = Math.floor(random() * 12);
    const raw = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    assert.equal(cleanComment(raw), reference(raw), JSON.stringify(raw));
  }
});

// The parser takes a brace comment that is already clean but for a space at either end without cleanComment
// (parse.ts braceComment): what it keeps must be what cleanComment makes of the comment.
const commentOf = (raw: string): string => {
  const r = parseGame(`1. e4 {${raw}} *`);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.game.moves[0]?.comments?.join('|') ?? '';
};

test('every UTF-16 code unit in a brace comment, as the parser reads it, is cleaned as \\s says', () => {
  for (let c = 0; c < 0x10000; c++) {
    if (c === 0x7d) continue; // '}' ends the comment
    const ch = String.fromCharCode(c);
    for (const raw of [
      ch,
      `a${ch}b`,
      `a${ch}${ch}b`,
      `a ${ch}b`,
      `${ch}ab`,
      `ab${ch}`,
      ` ${ch} `,
      ` a${ch} `,
    ]) {
      assert.equal(
        commentOf(raw),
        reference(raw),
        `U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(raw)}`,
      );
    }
  }
});

test('random brace comments of spaces, tabs and line breaks read as the reference cleans them', () => {
  const alphabet = [
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u3000',
    'e4',
    '+0.35/21',
    'é',
    '[%clk 1:59:58]',
  ];
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 20_000; i++) {
    const length = Math.floor(random() * 12);
    const raw = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    assert.equal(commentOf(raw), reference(raw), JSON.stringify(raw));
  }
});
