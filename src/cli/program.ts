// The `chessport` command's parser: its options, its commands and theirs (main.ts runs it). Building it runs
// nothing, so a test can parse arguments without running a command.
import packageJson from '../../package.json' with { type: 'json' };
import { ChessportCommand } from './command.ts';
import { appsCommand } from './commands/apps.ts';
import { databasesCommand } from './commands/databases.ts';
import { demoCommand } from './commands/demo.ts';
import { gamesCommand } from './commands/games.ts';
import { importCommand } from './commands/import.ts';
import { serveCommand } from './commands/serve.ts';
import { syncCommand } from './commands/sync.ts';
import { tokensCommand } from './commands/tokens.ts';
import { usersCommand } from './commands/users.ts';
import { webhooksCommand } from './commands/webhooks.ts';
import { type CliOutput, cliIo } from './io.ts';

export function chessportProgram(): ChessportCommand {
  const program = new ChessportCommand('chessport')
    .description('Serve users’ chess games through a read-only HTTP API, and run it: store, imports, tokens.')
    .option(
      '--database-url <url>',
      'SQLite file path or postgres:// URL (DATABASE_URL, default data/chessport.sqlite)',
    )
    // -V, --version: which version an operator runs, as the refusal of a store a newer one upgraded asks.
    .version(packageJson.version)
    .showHelpAfterError()
    .exitOverride()
    // Commander's help, version and errors go where the command's output goes (io.ts): the process's in
    // `chessport`. Set before the commands are added, which copy it.
    .configureOutput({
      writeOut: (text) => cliIo().stdout.write(text),
      writeErr: (text) => cliIo().stderr.write(text),
      getOutHelpWidth: () => helpWidth(cliIo().stdout),
      getErrHelpWidth: () => helpWidth(cliIo().stderr),
    });

  serveCommand(program);
  demoCommand(program);
  usersCommand(program);
  appsCommand(program);
  tokensCommand(program);
  webhooksCommand(program);
  databasesCommand(program);
  importCommand(program);
  gamesCommand(program);
  syncCommand(program);
  return program;
}

/** A terminal's width, as commander's default; 80 (commander's width where it has none) for a pipe or file. */
function helpWidth(output: CliOutput): number {
  return (output.isTTY ? output.columns : undefined) ?? 80;
}
