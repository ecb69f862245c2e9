import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { MAX_GAMES_LIMIT } from '../../store/index.ts';
import type { ChessportCommand } from '../command.ts';
import { jsonOption, oneDatabase, requireUser, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { counted, databaseCliJson, emit, emitTable } from '../output.ts';
import { parseName, parsePositiveInt } from '../settings.ts';

function parseMaxGames(text: string): number {
  const value = parsePositiveInt(text, '--max-games');
  if (value > MAX_GAMES_LIMIT)
    throw new CliError(`--max-games must be at most ${MAX_GAMES_LIMIT}, got ${text}`);
  return value;
}

export function databasesCommand(program: ChessportCommand): void {
  const databases = program.command('databases').description("manage users' game databases");
  databases
    .command('add <name>')
    .newNames()
    .description('create a database for a user')
    .requiredOption('--user <login>', 'owner')
    .option('--private', 'mark the database private')
    .option('--max-games <n>', `maximum number of games, 1 to ${MAX_GAMES_LIMIT}`)
    .option(...jsonOption)
    .action(
      async (
        name: string,
        opts: { user: string; private?: boolean; maxGames?: string; json?: boolean },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          parseName(name, 'the database name');
          const maxGames = opts.maxGames === undefined ? null : parseMaxGames(opts.maxGames);
          const user = await requireUser(store, opts.user);
          const db = await store.databases.add({
            ownerId: user.id,
            name,
            private: Boolean(opts.private),
            maxGames,
          });
          emit(
            Boolean(opts.json),
            databaseCliJson(db, user.login, 0),
            () => `created database ${db.slug} (${db.id})`,
          );
        }),
    );
  databases
    .command('list')
    .description('list databases with their game counts')
    .option('--user <login>', 'only this user')
    .option(...jsonOption)
    .action(async (opts: { user?: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const owner = opts.user === undefined ? undefined : await requireUser(store, opts.user);
        const logins = new Map((await store.accounts.listUsers()).map((u) => [u.id, u.login]));
        const rows: ReturnType<typeof databaseCliJson>[] = [];
        for (const db of await store.databases.list(owner?.id)) {
          rows.push(
            databaseCliJson(db, logins.get(db.ownerId) ?? '?', await store.databases.countGames(db.id)),
          );
        }
        emitTable(Boolean(opts.json), rows, rows, [
          ['USER', (r) => r.owner],
          ['SLUG', (r) => r.slug],
          ['NAME', (r) => r.name],
          ['GAMES', (r) => String(r.games)],
          ['MAX', (r) => String(r.maxGames ?? '-')],
          ['ID', (r) => r.id],
        ]);
      }),
    );
  databases
    .command('delete <id-slug-or-name>')
    .description('delete a database: its games become deleted in the feed, and it leaves every list')
    .requiredOption('--user <login>', 'owner')
    .option(...jsonOption)
    .action(async (ref: string, opts: { user: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const user = await requireUser(store, opts.user);
        const db = oneDatabase(await store.databases.findByRef(user.id, ref), ref, `user ${user.login}`);
        const deleted = db && (await store.databases.delete(db));
        if (!db || !deleted) throw new CliError(`no database "${ref}" of user ${user.login}`);
        emit(
          Boolean(opts.json),
          {
            id: db.id,
            owner: user.login,
            name: db.name,
            slug: db.slug,
            gamesDeleted: deleted.tombstoned,
            deletedAt: iso(deleted.deletedAt),
          },
          () => `deleted database ${db.slug} (${db.id}) and its ${counted(deleted.tombstoned, 'game')}`,
        );
      }),
    );
}
