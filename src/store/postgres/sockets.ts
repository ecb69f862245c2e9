// The sockets of the PostgreSQL pool, so that a connection that goes silent can be dropped. A server that
// vanishes without a word (a host gone in a failover, a network partition, a frozen process) leaves its
// connections open: a query sent on one waits for TCP to give up, about 15 minutes, and every pooled
// connection that meets the outage hangs like that, so the API would go on answering 503 (no free connection)
// long after a new primary is up. TCP keepalive does not help: it stays quiet while sent data is unacked.
import { Socket } from 'node:net';

export class PoolSockets {
  private readonly open = new Set<Socket>();
  private silenceMs = 0;

  /** pg's `stream` option: the socket of each new connection (TLS, when asked for, is layered on it). */
  readonly create = (): Socket => {
    const socket = new Socket();
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    socket.on('timeout', () => {
      const error = new Error(`PostgreSQL sent nothing for ${this.silenceMs / 1000} s: connection dropped`);
      // ETIMEDOUT: the API answers it with 503 unavailable (faults.ts), like any lost connection.
      socket.destroy(Object.assign(error, { code: 'ETIMEDOUT' }));
    });
    if (this.silenceMs > 0) socket.setTimeout(this.silenceMs);
    return socket;
  };

  /**
   * From now on a connection that receives and sends nothing for ms is destroyed: its query fails and the
   * pool replaces it. A connection is silent only while a query waits for its answer, or while idle in the
   * pool, which closes idle ones after 10 s anyway (ms must be longer).
   */
  limitSilence(ms: number): void {
    this.silenceMs = ms;
    for (const socket of this.open) socket.setTimeout(ms);
  }
}
