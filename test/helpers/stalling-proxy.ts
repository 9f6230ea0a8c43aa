/**
 * A TCP proxy in front of a test PostgreSQL or Redis that can stop carrying anything (a partition: the
 * connections stay open, nothing comes back, not even to their close), for the tests of a gateway's stop.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface StallingProxy {
  port: number;
  /** Carries nothing more either way, and closes nothing. */
  stall(): void;
  /** The connections the gateway opened and has not ended. */
  openFromGateway(): number;
  /** Bytes the gateway sent since `stall()`, carried nowhere. */
  heldFromGateway(): number;
  close(): Promise<void>;
}

export async function startStallingProxy(target: URL, defaultPort: number): Promise<StallingProxy> {
  const sockets = new Set<Socket>();
  const open = new Set<Socket>();
  let stalled = false;
  let held = 0;
  // Half-open allowed: a client's end is not answered with the proxy's own, as a partition would not.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect(Number(target.port || defaultPort), target.hostname);
    open.add(client);
    client.on('end', () => open.delete(client));
    client.on('close', () => open.delete(client));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (data: Buffer) => {
      if (stalled) held += data.length;
      else upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => stalled || client.write(data));
    client.on('end', () => stalled || upstream.end());
    upstream.on('end', () => stalled || client.end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as { port: number }).port,
    stall() {
      stalled = true;
    },
    openFromGateway: () => open.size,
    heldFromGateway: () => held,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** `url` (a PostgreSQL or Redis URL) with its host and port those of `proxy`, its other parts kept. */
export function throughProxy(url: string, proxy: StallingProxy): URL {
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  return proxied;
}
