// Writer for the PGN standard's export format (section 8 of the PGN standard):
// Seven Tag Roster first, other tags in ASCII order, one blank line, movetext wrapped below
// 80 columns, result terminator, final newline. Tag lines are never wrapped (a value cannot
// be split), so only they can be longer than 79 characters, besides a single comment word
// longer than a line, which gets a line of its own.

import type { MoveNode, MoveTree } from './tree.ts';

export const SEVEN_TAG_ROSTER = ['Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result'] as const;

const RESULTS = new Set(['1-0', '0-1', '1/2-1/2', '*']);
const ROSTER = new Set<string>(SEVEN_TAG_ROSTER);

/**
 * The game result written in the export (Result tag and terminator, which must agree).
 * The Result tag wins over a disagreeing terminator: it is the value users see in the tags
 * and the one tools fill in deliberately, while terminators are often a bare "*" in
 * truncated or live exports. An invalid tag value ("", "3/2") falls back to the terminator.
 */
export function exportResult(tags: Map<string, string>, terminator: string | undefined): string {
  const tag = tags.get('Result')?.trim();
  if (tag !== undefined && RESULTS.has(tag)) return tag;
  if (terminator !== undefined && RESULTS.has(terminator)) return terminator;
  return '*';
}

/**
 * Calls `visit` with each tag in export order, value as written: the Seven Tag Roster in its order
 * (missing ones filled with "?", Date "????.??.??", Result the export's), then the other tags in
 * ASCII order of names, collected and sorted only when there are any (many games have none).
 */
function eachExportTag(
  tags: Map<string, string>,
  result: string,
  visit: (name: string, value: string) => void,
): void {
  let rosterTags = 0;
  for (const name of SEVEN_TAG_ROSTER) {
    const tag = tags.get(name);
    if (tag !== undefined) rosterTags++;
    visit(name, name === 'Result' ? result : (tag ?? (name === 'Date' ? '????.??.??' : '?')));
  }
  if (tags.size === rosterTags) return;
  const others: string[] = [];
  for (const name of tags.keys()) {
    if (!ROSTER.has(name)) others.push(name);
  }
  others.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of others) visit(name, tags.get(name) as string);
}

/** Tags in export order (eachExportTag), as name-value pairs. */
export function exportTags(tags: Map<string, string>, result: string): [string, string][] {
  const out: [string, string][] = [];
  eachExportTag(tags, result, (name, value) => out.push([name, value]));
  return out;
}

/** Whether a tag value holds a character that escapeTagValue changes: CR, LF, backslash or quote. */
function needsEscape(value: string): boolean {
  // A loop: values are short, and a regular expression's call cost more than the scan.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 13 || c === 10 || c === 92 || c === 34) return true;
  }
  return false;
}

function escapeTagValue(value: string): string {
  if (!needsEscape(value)) return value; // nearly every value: nothing to do
  // Line breaks would end the tag line; the standard allows none in a value.
  const oneLine = /[\r\n]/.test(value) ? value.replace(/\r?\n|\r/g, ' ') : value;
  return oneLine.replace(/[\\"]/g, '\\$&');
}

const MAX_LINE = 79;

/** Accumulates movetext tokens and wraps them into lines of at most 79 characters. */
class Wrapper {
  /** The lines, after a first entry for finish() to fill with the text before the movetext. */
  private readonly lines: string[] = [''];
  private line = '';
  /** Text glued to the front of the next token ('(' of a variation). */
  private prefix = '';

  token(text: string): void {
    const t = this.prefix + text;
    this.prefix = '';
    if (this.line.length === 0) this.line = t;
    else if (this.line.length + 1 + t.length <= MAX_LINE) this.line += ` ${t}`;
    else {
      this.lines.push(this.line);
      this.line = t;
    }
  }

  /**
   * The space-separated words of `text` as tokens, one line's worth at a time: the same lines as
   * token() per word, without a string per word (engine comments are most of some files' text).
   */
  words(text: string): void {
    let pos = 0;
    if (this.prefix.length > 0) {
      text = this.prefix + text;
      this.prefix = '';
    }
    while (pos < text.length) {
      if (this.line.length === 0) {
        // A line's first word goes on it whatever its length, then the words that fit after it, taken as
        // one slice of the text (a line that is one string is cheaper to join than one in pieces).
        if (text.length - pos <= MAX_LINE) {
          this.line = pos === 0 ? text : text.slice(pos);
          return;
        }
        const first = text.indexOf(' ', pos);
        if (first === -1) {
          this.line = text.slice(pos);
          return;
        }
        let space = pos + MAX_LINE;
        while (space > first + 1 && text.charCodeAt(space) !== 32) space--;
        const end = space > first + 1 ? space : first;
        this.lines.push(text.slice(pos, end));
        pos = end + 1;
        continue;
      }
      // Room for the words after " ": they fit if they end (at a space or the end) within it.
      const room = MAX_LINE - this.line.length - 1;
      if (text.length - pos <= room) {
        this.line += ` ${text.slice(pos)}`;
        return;
      }
      // The last space within the room (a loop: lastIndexOf with a start is a slow runtime call in V8).
      let space = pos + room;
      while (space > pos && text.charCodeAt(space) !== 32) space--;
      if (space > pos) {
        this.line += ` ${text.slice(pos, space)}`;
        pos = space + 1;
      }
      this.lines.push(this.line);
      this.line = '';
    }
  }

  open(text: string): void {
    this.prefix += text;
  }

  /** Glues text to the end of the previous token (')' of a variation). */
  close(text: string): void {
    if (this.line.length + text.length <= MAX_LINE || this.line.indexOf(' ') === -1) {
      this.line += text;
      return;
    }
    // Move the last token to the next line together with the ')'.
    const cut = this.line.lastIndexOf(' ');
    this.lines.push(this.line.slice(0, cut));
    this.line = this.line.slice(cut + 1) + text;
  }

  /**
   * `head`, a line break, the movetext lines and a final line break, made as one flat string by a single
   * join (concatenating them would copy the whole game again when the string is hashed).
   */
  finish(head: string): string {
    if (this.line.length > 0) this.lines.push(this.line);
    this.lines[0] = head;
    this.lines.push('');
    return this.lines.join('\n');
  }
}

function writeComment(w: Wrapper, text: string): void {
  // Words are separate tokens so long comments wrap at their spaces.
  w.words(`{${text}}`);
}

/** "12. " and "12... ", made once for the first thousand moves (a number made a string per move). */
const WHITE_NUMBERS = Array.from({ length: 1000 }, (_, n) => `${n}. `);
const BLACK_NUMBERS = Array.from({ length: 1000 }, (_, n) => `${n}... `);

function writeLine(w: Wrapper, nodes: MoveNode[]): void {
  // A black move is numbered at the start of a line and after a comment, NAG or variation.
  let numberBlack = true;
  for (const node of nodes) {
    if (node.startComments) {
      for (const c of node.startComments) writeComment(w, c);
      numberBlack = true;
    }
    const n = node.moveNumber;
    if (node.white) w.token((WHITE_NUMBERS[n] ?? `${n}. `) + node.san);
    else if (numberBlack) w.token((BLACK_NUMBERS[n] ?? `${n}... `) + node.san);
    else w.token(node.san);
    numberBlack = false;
    if (node.nags) {
      for (const nag of node.nags) w.token(`$${nag}`);
      numberBlack = true;
    }
    if (node.comments) {
      for (const c of node.comments) writeComment(w, c);
      numberBlack = true;
    }
    if (node.variations) {
      for (const variation of node.variations) {
        w.open('(');
        writeLine(w, variation);
        w.close(')');
      }
      numberBlack = true;
    }
  }
}

/** The game in export format, ending with a newline. */
export function writeExportPgn(tags: Map<string, string>, tree: MoveTree, result: string): string {
  const w = new Wrapper();
  for (const c of tree.comments) writeComment(w, c);
  writeLine(w, tree.moves);
  w.token(result);
  return w.finish(writeTags(tags, result)); // the tag lines end with a line break: a blank line follows
}

/**
 * The tag lines of a game with no tags but Result (opening books, engine test positions: every tag "?"), per
 * export result: they are the same for all such games.
 */
const BARE_TAGS = new Map<string, string>();

/** The tag lines of the export, each ending with a newline: no list of pairs is made. */
function writeTags(tags: Map<string, string>, result: string): string {
  const bare = tags.size === 0 || (tags.size === 1 && tags.has('Result'));
  if (bare) {
    const known = BARE_TAGS.get(result);
    if (known !== undefined) return known;
  }
  let text = '';
  eachExportTag(tags, result, (name, value) => {
    text += `[${name} "${escapeTagValue(value)}"]\n`;
  });
  if (bare) BARE_TAGS.set(result, text);
  return text;
}
