// What the operator meets around the commands: `--version`, which settings a command reads, CHESSPORT_DEBUG's
// off values, and counts in the text output said in the singular for one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cli, cliJson, type Env, tempEnv } from '../helpers/harness.ts';

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

describe('--version', () => {
  test('--version and -V print the version of package.json, and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const result = await cli(env, [flag]);
      assert.deepEqual(result, { code: 0, stdout: `${VERSION}\n`, stderr: '' }, flag);
    }
  });
});
