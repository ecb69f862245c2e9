import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { jsonOption, withStore } from '../context.ts';
import { emit, table } from '../output.ts';
import { MAX_KEY_NAME_LENGTH, parseName } from '../settings.ts';

export function appsCommand(program: Command): void {
  const apps = program.command('apps').description('manage the apps that tokens are issued to');
  apps
    .command('add <name>')
    .description('register an app')
    .option(
      '--sector <sector>',
      'pairwise-id sector: apps of one sector see the same user ids (default: the app alone)',
    )
    .option(...jsonOption)
    .action(async (name: string, opts: { sector?: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        parseName(name, 'the app name', MAX_KEY_NAME_LENGTH);
        // An empty sector (`--sector "$SECTOR"` with the variable unset) would be one that every such app
        // shares, and with it the user ids, where leaving the option out gives the app its own.
        if (opts.sector !== undefined) parseName(opts.sector, '--sector');
        const app = await store.addApp({ name, sector: opts.sector });
        emit(
          Boolean(opts.json),
          { id: app.id, name: app.name, sector: app.sector, createdAt: iso(app.createdAt) },
          () => `registered app ${name}`,
        );
      }),
    );
  apps
    .command('list')
    .description('list apps')
    .option(...jsonOption)
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const all = await store.listApps();
        emit(
          Boolean(opts.json),
          all.map((a) => ({ id: a.id, name: a.name, sector: a.sector, createdAt: iso(a.createdAt) })),
          () => table([['NAME', 'SECTOR', 'ID'], ...all.map((a) => [a.name, a.sector, a.id])]),
        );
      }),
    );
}
