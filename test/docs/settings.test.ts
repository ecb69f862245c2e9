// Every environment variable the code reads is documented in docs/configuration.md, and every variable its
// tables list is read by the code: a setting added, renamed or dropped cannot leave the docs behind. The code's
// names are found in src/ as the settings read them: `setting(env, 'NAME', ...)`, `env.NAME` or
// `process.env.NAME`, and the heavy-request limits `<kind>_PER_CLIENT`, `<kind>_PER_INSTANCE`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { HEAVY_KIND_NAMES, HEAVY_KINDS } from '../../src/api/heavy-kinds.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The environment variables a source text reads. */
export function variablesRead(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/\bsetting\(\s*env,\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(m[1] as string);
  for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1] as string);
  return names;
}

/** The variables the first column of docs/configuration.md's tables names (`A`, `B` on one row). */
export function variablesListed(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (cell === undefined) continue;
    for (const m of cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1] as string);
  }
  return names;
}

function codeVariables(): Set<string> {
  const src = join(ROOT, 'src');
  const names = new Set<string>();
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    for (const name of variablesRead(readFileSync(join(src, file), 'utf8'))) names.add(name);
  }
  for (const kind of HEAVY_KIND_NAMES) {
    names.add(`${HEAVY_KINDS[kind].env}_PER_CLIENT`);
    names.add(`${HEAVY_KINDS[kind].env}_PER_INSTANCE`);
  }
  return names;
}

const CONFIGURATION = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');

test('every environment variable the code reads is in docs/configuration.md', () => {
  const missing = [...codeVariables()].filter((name) => !CONFIGURATION.includes(`\`${name}\``));
  assert.deepEqual(missing.sort(), []);
});

test("every variable in docs/configuration.md's tables is read by the code", () => {
  const read = codeVariables();
  const stale = [...variablesListed(CONFIGURATION)].filter((name) => !read.has(name));
  assert.deepEqual(stale.sort(), []);
});

test('the names read and listed are found as the settings write them', () => {
  const source = [
    "port: setting(env, 'PORT', parsePort, 8080),",
    "const x = setting(\n    env,\n    'PAGE_CACHE_MB',\n    parse,\n  );",
    "host: env.HOST || '127.0.0.1',",
    'const token = process.env.CHESSPORT_TOKEN;',
    'const other = env[name];',
  ].join('\n');
  assert.deepEqual([...variablesRead(source)].sort(), ['CHESSPORT_TOKEN', 'HOST', 'PAGE_CACHE_MB', 'PORT']);
  const table = ['| variable | default |', '|---|---|', '| `A_B`, `C` | `10` |', 'Text `D` in prose.'].join(
    '\n',
  );
  assert.deepEqual([...variablesListed(table)].sort(), ['A_B', 'C']);
});
