// Runs the API until SIGTERM/SIGINT, then closes the listener (in-flight requests finish) and the store.
import { buildApp } from '../api/app.ts';
import type { Store } from '../store/index.ts';
import type { Settings } from './settings.ts';

export async function runServer(store: Store, settings: Settings): Promise<string> {
  const secret = settings.secret ?? (await store.serverSecret());
  const app = buildApp({ store, secret, logLevel: settings.logLevel });
  const address = await app.listen({ host: settings.host, port: settings.port });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return address;
}
