// docs/design.md "Architecture": the client (packages/client/src) imports nothing outside itself, not even a Node.js built-in, as it
// runs on global fetch alone; dependency-cruiser checks every import statically (.dependency-cruiser.cjs),
// and this file checks what loading the client resolves. The client shares the contract's types
// (src/client/types.ts), checked here against the server's serialisers at compile time.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules, stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Client from '../../packages/client/src/types.ts';
import type { ApiError, ErrorCode as ServerErrorCode } from '../../src/api/errors.ts';
import type { changeJson, databaseJson, gameDetailJson, gameSummaryJson } from '../../src/api/serialize.ts';
import { ROOT } from '../helpers/harness.ts';
import { modulesResolvedBy } from '../helpers/resolved-modules.ts';

const CLIENT = join(ROOT, 'packages/client/src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name));
}

/**
 * The modules a TypeScript file loads at runtime: Node's own type stripping removes `import type` and
 * `export type` (as it does when the file runs), and what is left is read for static and dynamic imports.
 */
function runtimeImports(source: string): string[] {
  const code = stripTypeScriptTypes(source);
  const found: string[] = [];
  const patterns = [
    /(?:^|[;\s}])(?:import|export)\s*(?:[\w*${}\s,]+?\s*from\s*)?['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
    /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1] as string);
  if (/\bimport\s*\(\s*[^'"`\s]/.test(code)) found.push('<computed dynamic import>');
  if (/\bcreateRequire\b/.test(code)) found.push('<createRequire>');
  return found;
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string);

test('the scanner sees runtime imports and ignores type-only ones', () => {
  const source = [
    "import type { Store } from '../store/index.ts';",
    "import { type GameRecord } from '../store/types.ts';",
    "import { openStore } from '../store/index.ts';",
    "export { x } from '../api/app.ts';",
    "export type { Y } from '../api/errors.ts';",
    "const m = await import('../chess/index.ts');",
  ].join('\n');
  assert.deepEqual(runtimeImports(source).sort(), [
    '../api/app.ts',
    '../chess/index.ts',
    '../store/index.ts',
    // `import { type X }` still loads the module at runtime (verbatimModuleSyntax), so it counts.
    '../store/types.ts',
  ]);
});

test('no file of packages/client/src loads code from outside it; only `import type` leaves the folder', () => {
  const files = sourceFiles(CLIENT);
  assert.ok(files.length >= 5);
  const offences: string[] = [];
  for (const file of files) {
    for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
      const where = `${relative(ROOT, file)} imports ${specifier}`;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        if (!target.startsWith(CLIENT + sep)) offences.push(`${where} (outside packages/client/src)`);
      } else if (isBuiltin(specifier)) {
        offences.push(`${where} (the client runs on global fetch alone, not Node.js APIs)`);
      } else {
        offences.push(`${where} (a package the client does not need)`);
      }
    }
  }
  assert.deepEqual(offences, []);
});

test('loading the client resolves its own modules and nothing else: no package, no Node.js built-in', async () => {
  const resolved = await modulesResolvedBy(join(CLIENT, 'index.ts'));
  const own = resolved.filter((url) => url.startsWith(`${pathToFileURL(CLIENT).href}/`));
  assert.ok(own.length >= 5, 'the hook saw the client modules');
  assert.deepEqual(
    resolved.filter((url) => !own.includes(url)),
    [],
  );
});

// ---- the shared contract: compile-time checks, run by `tsc --noEmit` ---------------------------------------

/** true when A and B have the same keys and every A is a B (the client may narrow, e.g. result's values). */
type Conforms<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? [A] extends [B]
      ? true
      : false
    : false
  : false;

/** true when A and B are the same union: every A is a B and every B an A. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const contract: {
  database: Conforms<Client.Database, ReturnType<typeof databaseJson>>;
  summary: Conforms<Client.GameSummary, ReturnType<typeof gameSummaryJson>>;
  detail: Conforms<Client.GameDetail, ReturnType<typeof gameDetailJson>>;
  change: Conforms<Client.Change, ReturnType<typeof changeJson>>;
  player: Conforms<Client.Player, ReturnType<typeof gameSummaryJson>['white']>;
  /** Each side writes the error codes once (src/api/errors.ts, src/client/error-codes.ts): they must agree. */
  errorCodes: Same<Client.ErrorCode, ServerErrorCode>;
  errorBody: Conforms<Client.ErrorBody, ReturnType<ApiError['body']>>;
} = {
  database: true,
  summary: true,
  detail: true,
  change: true,
  player: true,
  errorCodes: true,
  errorBody: true,
};

test('the client types have the keys of what the server serialises, and its error codes (checked by tsc)', () => {
  assert.ok(Object.values(contract).every(Boolean));
});
