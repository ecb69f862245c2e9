import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { jsonOption, withStore } from '../context.ts';
import { emit, table } from '../output.ts';
import { CliError, MAX_KEY_NAME_LENGTH, parseName } from '../settings.ts';

// /me serves these as the spec's "e-mail address" and "URL of the user's image": a client may mail the one and
// load or link the other, so a value that is neither (an empty one, `javascript:...`) is refused here.
const EMAIL = /^[^\s@]+@[^\s@]+$/u;

function parseEmail(text: string): string {
  if (!EMAIL.test(parseName(text, '--email'))) {
    throw new CliError(`--email must be an e-mail address such as ann@example.org, got "${text}"`);
  }
  return text;
}

function parseImageUrl(text: string): string {
  const url = URL.parse(parseName(text, '--image'));
  if ((url?.protocol !== 'https:' && url?.protocol !== 'http:') || /\s/u.test(text)) {
    throw new CliError(`--image must be an http or https URL, got "${text}"`);
  }
  return text;
}

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
          const user = await store.addUser({
            login,
            name: opts.name === undefined ? undefined : parseName(opts.name, '--name'),
            email: opts.email === undefined ? undefined : parseEmail(opts.email),
            image: opts.image === undefined ? undefined : parseImageUrl(opts.image),
          });
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
