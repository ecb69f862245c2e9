import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../oauth/password-rules.ts';
import type { User } from '../../store/index.ts';
import type { ChessportCommand } from '../command.ts';
import { jsonOption, requireUser, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { emit, emitTable } from '../output.ts';
import { readPassword } from '../password-input.ts';
import { MAX_KEY_NAME_LENGTH, parseName } from '../settings.ts';

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

function userJson(user: User) {
  const { id, login, name, email, image } = user;
  return { id, login, name, email, image, createdAt: iso(user.createdAt) };
}

export function usersCommand(program: ChessportCommand): void {
  const users = program.command('users').description('manage users');
  users
    .command('add <login>')
    .newNames()
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
          const user = await store.accounts.addUser({
            login,
            name: opts.name === undefined ? undefined : parseName(opts.name, '--name'),
            email: opts.email === undefined ? undefined : parseEmail(opts.email),
            image: opts.image === undefined ? undefined : parseImageUrl(opts.image),
          });
          emit(Boolean(opts.json), userJson(user), () => `created user ${login}`);
        }),
    );
  users
    .command('passwd <login>')
    .description('set the password the user signs in with (asked on the terminal without echo)')
    .option('--stdin', 'read the password from standard input instead (for scripts)')
    .option(...jsonOption)
    .action(async (login: string, opts: { stdin?: boolean; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const user = await requireUser(store, login);
        const password = await readPassword(Boolean(opts.stdin));
        const length = [...password].length;
        if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
          throw new CliError(
            `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters, got ${length}: nothing changed`,
          );
        }
        // Loaded here: scrypt is for this command only.
        const { hashPassword } = await import('../../oauth/passwords.ts');
        await store.accounts.setPasswordHash(user.id, await hashPassword(password));
        emit(Boolean(opts.json), { login, passwordSet: true }, () => `set the password of ${login}`);
      }),
    );
  users
    .command('update <login>')
    .description('change a user: --developer lets them use the developer console (DEVELOPER_CONSOLE=invite)')
    .option('--developer', 'let the user use the developer console at /developers')
    .option('--no-developer', 'close the developer console to the user (their apps stay)')
    .option(...jsonOption)
    .action(async (login: string, opts: { developer?: boolean; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const user = await requireUser(store, login);
        if (opts.developer === undefined) throw new CliError('give --developer or --no-developer');
        await store.accounts.setDeveloper(user.id, opts.developer);
        emit(Boolean(opts.json), { ...userJson(user), developer: opts.developer }, () =>
          opts.developer
            ? `${login} may use the developer console`
            : `${login} may not use the developer console`,
        );
      }),
    );
  users
    .command('list')
    .description('list users')
    .option(...jsonOption)
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const all = await store.accounts.listUsers();
        emitTable(Boolean(opts.json), all.map(userJson), all, [
          ['LOGIN', (u) => u.login],
          ['NAME', (u) => u.name ?? ''],
          ['EMAIL', (u) => u.email ?? ''],
        ]);
      }),
    );
}
