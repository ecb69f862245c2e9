// docs/design.md "Architecture": the sync engine is a consumer of the API like any other. @chessport/sync
// (packages/sync) builds on @chessport/client and its own store (better-sqlite3), never on the server's code;
// dependency-cruiser checks every import statically (.dependency-cruiser.cjs), and this file checks what
// loading the package resolves, as the project's processes load it: with the client from its sources.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { SOURCE_CONDITION } from '../../src/cli/workspace-sources.ts';
import { ROOT } from '../helpers/harness.ts';
import { modulesResolvedBy } from '../helpers/resolved-modules.ts';

test('loading @chessport/sync resolves no module of the server: only the client, from its sources, and its own', async () => {
  const resolved = await modulesResolvedBy(join(ROOT, 'packages/sync/src/index.ts'), [SOURCE_CONDITION]);
  const inside = (folder: string) => (url: string) =>
    url.startsWith(`${pathToFileURL(join(ROOT, folder)).href}/`);
  const project = resolved.filter((url) => inside('src')(url) || inside('packages')(url));
  assert.ok(project.some(inside('packages/sync/src')), 'the hook saw the sync modules');
  assert.ok(project.some(inside('packages/client/src')), 'the hook saw the client modules');
  // Not the client's build (packages/client/dist), which is as old as the last install.
  assert.deepEqual(
    project.filter((url) => !inside('packages/sync/src')(url) && !inside('packages/client/src')(url)),
    [],
  );
});
