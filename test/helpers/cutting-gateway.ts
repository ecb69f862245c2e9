// An HTTP gateway in front of a server that cuts answers mid-way when told to: it sends half the body (under
// the whole body's Content-Length) and drops the connection, as a gateway restarting or a dropped link does.
// For the client's and the sync's tests of bodies that break off.
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CuttingGateway {
  base: string;
  close(): Promise<void>;
}

/** A gateway to `upstream` (a base URL); `cut(req)` decides, per request, whether its answer breaks off. */
export async function cuttingGateway(
  upstream: string,
  cut: (req: IncomingMessage) => boolean,
): Promise<CuttingGateway> {
  const target = new URL(upstream);
  const gateway = createServer((req, res) => {
    const cutThis = cut(req);
    const forward = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        if (!cutThis) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        });
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`,
    close: async () => {
      gateway.closeAllConnections();
      await new Promise((resolve) => gateway.close(resolve));
    },
  };
}
