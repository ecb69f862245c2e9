// A TCP proxy the tests can cut and restore, to make a networked store (PostgreSQL) unreachable on demand.
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
  /** Accepts and forwards again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  let forwarding = true;

  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    // Errors are the expected outcome of cutting the link.
    socket.on('error', () => undefined);
  };

  const pairs = new Set<[Socket, Socket]>();
  const onConnection = (client: Socket) => {
    track(client);
    if (!forwarding) return; // accepted, never answered
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on('close', () => {
      upstream.destroy();
      pairs.delete(pair);
    });
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
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
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
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
