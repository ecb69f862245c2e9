import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { jsonOption, withStore } from '../context.ts';
import { emit, table } from '../output.ts';
import { MAX_KEY_NAME_LENGTH, parseName } from '../settings.ts';

export function usersCommand(program: Command): void {
  const users = program.command('users').description('manage users');
  users
    .command('add <login>')
    .description('create a user')
    .option('--name <name>', 'display name')
    .option('--email <email>', 'e-mail address')
    .option('--image <url>', 'URL of the user image')
    .option(...jsonOption)
    .action(
      async (
        login: string,
        opts: { name?: string; email?: string; image?: string; json?: boolean },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          parseName(login, 'the login', MAX_KEY_NAME_LENGTH);
          const user = await store.addUser({ login, name: opts.name, email: opts.email, image: opts.image });
          emit(
            Boolean(opts.json),
            {
              id: user.id,
              login,
              name: user.name,
              email: user.email,
              image: user.image,
              createdAt: iso(user.createdAt),
            },
            () => `created user ${login}`,
          );
        }),
    );
  users
    .command('list')
    .description('list users')
    .option(...jsonOption)
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const all = await store.listUsers();
        emit(
          Boolean(opts.json),
          all.map((u) => ({
            id: u.id,
            login: u.login,
            name: u.name,
            email: u.email,
            image: u.image,
            createdAt: iso(u.createdAt),
          })),
          () =>
            table([['LOGIN', 'NAME', 'EMAIL'], ...all.map((u) => [u.login, u.name ?? '', u.email ?? ''])]),
        );
      }),
    );
}
