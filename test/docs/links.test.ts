// Every relative link in README.md and docs/ resolves: the file or folder it names exists, and its #anchor, in
// a Markdown file, names a heading there (as GitHub makes heading anchors) or an explicit <a id="...">. Links
// to other sites are not followed: the tests run offline. Links inside code (fenced blocks, `spans`) are text.
// And every project path in code (`src/store/games.ts`, `node bench/chess.ts`) names a file or folder that
// exists, so that a module moved or renamed cannot leave the docs pointing at nothing.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');

/** README.md and every Markdown file under docs/, the files whose links are checked. */
function markdownFiles(root: string): string[] {
  const docs = join(root, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(docs, f))
        .sort()
    : [];
  return [join(root, 'README.md'), ...inDocs];
}

/** The file's lines, each undefined inside a fenced code block (its fences included). */
function unfencedLines(text: string): (string | undefined)[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker?.startsWith(fence)) fence = undefined;
      return undefined;
    }
    if (marker) {
      fence = marker;
      return undefined;
    }
    return line;
  });
}

/** The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, each space a hyphen. */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file has: its headings' (repeats numbered -1, -2, as GitHub does) and its <a id>s. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of unfencedLines(text)) {
    if (line === undefined) continue;
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = headingAnchor(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1] as string);
  }
  return anchors;
}

/**
 * The link targets of a text, with the line each is on: inline links and images (their text may run over
 * lines), reference definitions, HTML href and src.
 */
function targetsOf(text: string): { target: string; line: number }[] {
  const found: { target: string; index: number }[] = [];
  for (const m of text.matchAll(/\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ target: m[1] as string, index: m.index });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?/gm)) {
    found.push({ target: m[1] as string, index: m.index });
  }
  for (const m of text.matchAll(/\b(?:href|src)="([^"]*)"/g))
    found.push({ target: m[1] as string, index: m.index });
  return found
    .sort((a, b) => a.index - b.index)
    .map(({ target, index }) => ({ target, line: text.slice(0, index).split('\n').length }));
}

/** What is wrong with the relative links of the Markdown files under `root`, one line per broken link. */
export function brokenLinks(root: string): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let found = anchorCache.get(file);
    if (!found) {
      found = anchorsOf(readFileSync(file, 'utf8'));
      anchorCache.set(file, found);
    }
    return found;
  };
  for (const file of markdownFiles(root)) {
    if (!existsSync(file)) {
      problems.push(`${relative(root, file)}: missing`);
      continue;
    }
    // Code is text: fenced blocks and inline `spans` are blanked (their line breaks kept, for line numbers).
    const prose = unfencedLines(readFileSync(file, 'utf8'))
      .map((line) => line ?? '')
      .join('\n')
      .replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, (code) => code.replace(/[^\n]/g, ''));
    for (const { target, line } of targetsOf(prose)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // another site, or mailto:
      const where = `${relative(root, file)}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? '' : decodeURIComponent(target.slice(hash + 1));
      const linked =
        path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
      if (!existsSync(linked)) problems.push(`${where}: no such file`);
      // Anchors into other files (lines of source code) are not checked.
      else if (anchor && linked.endsWith('.md') && !anchors(linked).has(anchor)) {
        problems.push(`${where}: no heading or <a id> "${anchor}" there`);
      }
    }
  }
  return problems;
}

/** A word of code that names a project file or folder: from the root, with no pattern (no `*`) in it. */
const PROJECT_PATH = /^(?:src|test|scripts|bench|bin|docs|\.ci)\/[\w./-]*$/;

/**
 * The project paths named in code (inline `spans` and fenced blocks) of the Markdown files under `root` that
 * name nothing there, one line each. A path is a word of the code.
 */
export function missingPaths(root: string): string[] {
  const problems: string[] = [];
  for (const file of markdownFiles(root)) {
    if (!existsSync(file)) continue; // brokenLinks reports it
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)) {
      for (const word of (m[2] as string).split(/\s+/)) {
        // Punctuation around it, and a line number after it (`src/x.ts:12`), are not part of the path.
        const path = word.replace(/^[("']+|[)"',;:.]+$/g, '').replace(/:\d+(?::\d+)?$/, '');
        if (!PROJECT_PATH.test(path) || existsSync(join(root, path))) continue;
        problems.push(
          `${relative(root, file)}:${text.slice(0, m.index).split('\n').length}: ${path}: no such file`,
        );
      }
    }
  }
  return problems;
}

test('every relative link and anchor in README.md and docs/ resolves', () => {
  assert.ok(existsSync(join(ROOT, 'docs')), 'docs/ is missing');
  assert.deepEqual(brokenLinks(ROOT), []);
});

test('design.md keeps an anchor for each numbered decision, 1 to 26', () => {
  const anchors = anchorsOf(readFileSync(join(ROOT, 'docs/design.md'), 'utf8'));
  for (let n = 1; n <= 26; n++) assert.ok(anchors.has(`decision-${n}`), `decision-${n}`);
});

test('a broken file link or anchor is found, and a good one is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-links-'));
  try {
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Title',
        '[good](docs/a.md) [good anchor](docs/a.md#the-store-and-sync) [self](#title) [site](https://example.org/x)',
        '[gone](docs/missing.md) and [bad anchor](docs/a.md#nowhere) and [a link over',
        'two lines](docs/gone.md)',
        '`[in code](docs/missing.md)`',
        '```',
        '[in a fence](docs/missing.md)',
        '```',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'docs/a.md'),
      '# A\n\n## The store and `sync`\n\n1. <a id="decision-1"></a>One.\n\n[back](../README.md#title) [one](#decision-1) [two](#decision-2)\n',
    );
    assert.deepEqual(brokenLinks(dir), [
      'README.md:3: docs/missing.md: no such file',
      'README.md:3: docs/a.md#nowhere: no heading or <a id> "nowhere" there',
      'README.md:3: docs/gone.md: no such file',
      'docs/a.md:7: #decision-2: no heading or <a id> "decision-2" there',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every project path named in code in README.md and docs/ exists', () => {
  assert.deepEqual(missingPaths(ROOT), []);
});

test('a project path in code that names nothing is found, and one that exists, a URL or a pattern is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-paths-'));
  try {
    mkdirSync(join(dir, 'docs'));
    mkdirSync(join(dir, 'src/store'), { recursive: true });
    writeFileSync(join(dir, 'src/store/games.ts'), '');
    writeFileSync(
      join(dir, 'README.md'),
      [
        '`src/store/games.ts` and (`src/store/`, `src/store/gone.ts`) and `node bench/gone.ts --games 5`',
        '`/docs/json` `test/**/*.test.ts` `https://example.org/src/x.ts` `dist/client`',
        '```sh',
        'node scripts/gone.sh',
        '```',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'docs/a.md'),
      'A path over two lines: `node\nsrc/store/games.ts`, `src/x.ts:12`.\n',
    );
    assert.deepEqual(missingPaths(dir), [
      'README.md:1: src/store/gone.ts: no such file',
      'README.md:1: bench/gone.ts: no such file',
      'README.md:3: scripts/gone.sh: no such file',
      'docs/a.md:2: src/x.ts: no such file',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('heading anchors are made as GitHub makes them', () => {
  assert.equal(headingAnchor('OpenAPI document and /docs'), 'openapi-document-and-docs');
  assert.equal(headingAnchor('The client and `chessport sync`'), 'the-client-and-chessport-sync');
  assert.equal(headingAnchor('TRUST_PROXY'), 'trust_proxy');
  assert.equal(headingAnchor("Decisions on the spec's open points"), 'decisions-on-the-specs-open-points');
});
