// What loading a module resolves, as Node.js runs it: a child process registers a resolve hook, imports the
// entry and prints every URL it resolved (file: modules, node: built-ins). The boundary tests read it.
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ROOT } from './harness.ts';

/**
 * Every URL resolved while importing `entry` (an absolute path), the entry included; with `conditions`, as
 * `node --conditions=…` resolves (the workspace packages' sources: src/cli/workspace-sources.ts).
 */
export async function modulesResolvedBy(entry: string, conditions: string[] = []): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
    await import(${JSON.stringify(pathToFileURL(entry).href)});
    console.log(JSON.stringify([...seen]));
  `;
  const flags = conditions.map((condition) => `--conditions=${condition}`);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...flags, '--input-type=module', '-e', script],
    {
      cwd: ROOT,
    },
  );
  return JSON.parse(stdout) as string[];
}
