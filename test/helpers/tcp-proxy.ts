// A TCP proxy the tests can cut and restore, to make a networked store (PostgreSQL) unreachable on demand,
// or slow it down.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The local port, the same after every restore(). */
  port: number;
  /** Stops listening and drops every open connection: the store side sees them end, new ones are refused. */
  refuse(): Promise<void>;
  /** Drops every open connection; new ones are accepted but never answered (a host that stopped replying). */
  hang(): Promise<void>;
  /**
   * Stops forwarding on the open connections but keeps them open, as a server that vanished without a word
   * (a failover, a partition); new connections are forwarded (to the server that took over).
   */
  freeze(): Promise<void>;
  /**
   * Holds what the target sends back for `ms` before passing it on (0: at once), on every connection: a
   * store that answers slowly. The order of the bytes is kept.
   */
  slow(ms: number): void;
  /**
   * Forwards the connections to come to another target (a database's address moved to the new primary in a
   * failover); those open stay with the old one.
   */
  retarget(host: string, port: number): void;
  /** Accepts and forwards again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(host: string, targetPortAtFirst: number): Promise<TcpProxy> {
  let targetHost = host;
  let targetPort = targetPortAtFirst;
  const open = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  let forwarding = true;
  let delayMs = 0;

  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    // Errors are the expected outcome of cutting the link.
    socket.on('error', () => undefined);
  };

  /** The client's socket, the target's, and what passes the target's bytes on. */
  const pairs = new Set<[Socket, Socket, (chunk: Buffer) => void]>();
  const onConnection = (client: Socket) => {
    track(client);
    if (!forwarding) return; // accepted, never answered
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    // Bytes held (slow) are passed on in order, each once its delay is over; later ones wait behind them.
    const held: { at: number; chunk: Buffer }[] = [];
    let scheduled = false;
    const passOn = () => {
      scheduled = false;
      while (held.length > 0 && (held[0]?.at ?? 0) <= Date.now()) {
        const next = held.shift();
        if (next && client.writable) client.write(next.chunk);
      }
      if (held.length === 0) return;
      scheduled = true;
      setTimeout(passOn, (held[0]?.at ?? 0) - Date.now());
    };
    const forward = (chunk: Buffer) => {
      if (delayMs === 0 && held.length === 0) {
        client.write(chunk);
        return;
      }
      held.push({ at: Date.now() + delayMs, chunk });
      if (scheduled) return;
      scheduled = true;
      setTimeout(passOn, delayMs);
    };
    const pair: [Socket, Socket, (chunk: Buffer) => void] = [client, upstream, forward];
    pairs.add(pair);
    client.on('close', () => {
      upstream.destroy();
      pairs.delete(pair);
    });
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', forward);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(onConnection);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        const address = next.address();
        if (address && typeof address === 'object') port = address.port;
        server = next;
        resolve();
      });
    });

  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };

  const stopListening = () =>
    new Promise<void>((resolve) => {
      const current = server;
      server = null;
      if (!current) return resolve();
      current.close(() => resolve());
    });

  await listen();
  return {
    get port() {
      return port;
    },
    refuse: async () => {
      const stopped = stopListening();
      dropAll();
      await stopped;
    },
    hang: async () => {
      forwarding = false;
      dropAll();
    },
    freeze: async () => {
      for (const [client, upstream, forward] of pairs) {
        client.unpipe(upstream);
        upstream.off('data', forward);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    slow: (ms) => {
      delayMs = ms;
    },
    retarget: (nextHost, nextPort) => {
      targetHost = nextHost;
      targetPort = nextPort;
    },
    restore: async () => {
      forwarding = true;
      dropAll(); // the hung ones
      if (!server) await listen();
    },
    close: async () => {
      const stopped = stopListening();
      dropAll();
      await stopped;
    },
  };
}
