// docs/design.md "Architecture": the client (packages/client/src) imports nothing outside itself, not even a
// Node.js built-in, as it runs on global fetch alone; dependency-cruiser checks every import statically
// (.dependency-cruiser.cjs), and this file checks what loading the client resolves. The client shares the
// contract's types (packages/client/src/types.ts), checked here at compile time against the server's
// serialisers and, where no serialiser builds a shape, its JSON Schemas.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules, stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Client from '../../packages/client/src/types.ts';
import type { schemas, userSchema } from '../../src/api/schemas.ts';
import type {
  changeJson,
  expandedChangeJson,
  gameDetailJson,
  gameSummaryJson,
  listedDatabaseJson,
} from '../../src/api/serialize.ts';
import type { ApiError, ErrorCode as ServerErrorCode } from '../../src/platform/http/errors.ts';
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

// The wire shapes that no serialiser builds (the /me answer, the feed page around its items) are read from
// the JSON Schemas that validate and document them: each property's JSON type, and which are required.
type JsonType<T> = T extends 'string'
  ? string
  : T extends 'integer' | 'number'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? unknown[]
          : unknown;
type SchemaValue<S> = S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { type: readonly (infer T)[] }
    ? JsonType<T>
    : S extends { type: infer T }
      ? JsonType<T>
      : unknown;
/** An object schema's properties as a type, each required one required. */
type SchemaShape<S> = S extends { properties: infer P; required: readonly (infer R)[] }
  ? { [K in keyof P as K extends R ? K : never]: SchemaValue<P[K]> } & {
      [K in keyof P as K extends R ? never : K]?: SchemaValue<P[K]>;
    }
  : never;

type Page = Client.ChangesPage;
type ExpandedPage = Client.ChangesPage<Client.ExpandedChange>;

const contract: {
  /** GET /databases's items. */
  database: Conforms<Client.Database, ReturnType<typeof listedDatabaseJson>>;
  summary: Conforms<Client.GameSummary, ReturnType<typeof gameSummaryJson>>;
  detail: Conforms<Client.GameDetail, ReturnType<typeof gameDetailJson>>;
  change: Conforms<Client.Change, ReturnType<typeof changeJson>>;
  /** GET /changes?expand=game: the item with its game (null for a tombstone). */
  expandedChange: Conforms<Client.ExpandedChange, ReturnType<typeof expandedChangeJson>>;
  player: Conforms<Client.Player, ReturnType<typeof gameSummaryJson>['white']>;
  /** GET /me's data, from its schema. */
  user: Conforms<Client.User, SchemaShape<typeof userSchema>>;
  /** The feed page around its items, from the schema of GET /changes's answer. */
  changesPage: Conforms<Omit<Page, 'data'>, Omit<SchemaShape<typeof schemas.changes>, 'data'>>;
  pageKeys: Same<keyof Page, keyof SchemaShape<typeof schemas.changes>>;
  pageItems: Same<Page['data'][number], Client.Change>;
  expandedPageItems: Same<ExpandedPage['data'][number], Client.ExpandedChange>;
  /** Each side writes the error codes once (src/platform/http/errors.ts, packages/client/src/error-codes.ts). */
  errorCodes: Same<Client.ErrorCode, ServerErrorCode>;
  errorBody: Conforms<Client.ErrorBody, ReturnType<ApiError['body']>>;
} = {
  database: true,
  summary: true,
  detail: true,
  change: true,
  expandedChange: true,
  player: true,
  user: true,
  changesPage: true,
  pageKeys: true,
  pageItems: true,
  expandedPageItems: true,
  errorCodes: true,
  errorBody: true,
};

// The check checks: a wire type that differs in a key or a value's type fails it.
type Renamed = Omit<Client.User, 'email'> & { mail: string | null };
type Retyped = Omit<Client.ExpandedChange, 'game'> & { game: Client.GameSummary | null };
type Unrequired = Omit<Page, 'hasMore'> & { hasMore?: boolean };
const refused: {
  renamed: Conforms<Renamed, SchemaShape<typeof userSchema>>;
  retyped: Conforms<Retyped, ReturnType<typeof expandedChangeJson>>;
  unrequired: Conforms<Omit<Unrequired, 'data'>, Omit<SchemaShape<typeof schemas.changes>, 'data'>>;
} = { renamed: false, retyped: false, unrequired: false };

test('the client wire types are what the server serialises and its schemas say, and its error codes (checked by tsc)', () => {
  assert.ok(Object.values(contract).every(Boolean));
  assert.ok(!Object.values(refused).some(Boolean));
});
