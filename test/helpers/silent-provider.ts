/**
 * A provider that takes every request and never answers it: a call to it is under way until its client
 * goes or the gateway's stop cuts it.
 */
import http from 'node:http';

export interface SilentProvider {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** The requests it has taken, `METHOD path`, in order. */
  seen: string[];
  /** Resolves once it has taken `request` (any request, when not given), or after 10 s; what it has taken. */
  taken(request?: string): Promise<string[]>;
  /** Cuts what it holds and stops listening. */
  close(): Promise<void>;
}

export async function startSilentProvider(): Promise<SilentProvider> {
  const seen: string[] = [];
  const server = http.createServer((request) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    async taken(request) {
      const deadline = Date.now() + 10_000;
      const isTaken = () => (request === undefined ? seen.length > 0 : seen.includes(request));
      while (!isTaken() && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
      return seen;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
