import type { Command } from 'commander';
import { explainedStoreFailure, openCliStore, settingsOf } from '../context.ts';
import { loadServerSettings, parsePort } from '../settings.ts';
import { StopSignals } from '../stop-signals.ts';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('run the API server')
    .option('--host <host>', 'address to listen on (HOST, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (PORT, default 8080; 0 picks a free one)')
    .action(async (opts: { host?: string; port?: string }, cmd: Command) => {
      const settings = settingsOf(cmd);
      // Every setting is checked before the store opens: a bad one must not leave a new store, or a migrated one.
      const server = loadServerSettings();
      if (opts.host) settings.host = opts.host;
      if (opts.port !== undefined) settings.port = parsePort(opts.port, '--port');
      const signals = new StopSignals(); // before the store opens: see stop-signals.ts
      const store = await openCliStore(settings);
      // Loaded here, not at the top: the server (Fastify and its plugins) is most of the CLI's start-up
      // time, and every other command does without it.
      const { runServer } = await import('../server.ts');
      // Start-up writes the secret into a new store: a full or locked one fails here, saying so.
      await runServer(store, settings, server, signals).catch((error: unknown) => {
        throw explainedStoreFailure(error, settings.databaseUrl);
      });
    });
}
