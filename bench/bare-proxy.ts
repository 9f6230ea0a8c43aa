// The floor for any Node gateway: receive the body, forward it through undici's pool, stream the
// answer straight back. Nothing else. Prints `READY <port>`; UPSTREAM is the upstream origin.
// (The request body is read whole, as any gateway must to read the JSON; the answer is never buffered.)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './exit-with-parent.js';
import { Pool, type Dispatcher } from 'undici';

// More upstream connections than the bench ever opens to the proxy (512 in saturation mode): with 256,
// 512 clients against a 20 ms upstream capped the proxy at 12,800 requests/s, below what its core serves.
const pool = new Pool(process.env.UPSTREAM ?? 'http://127.0.0.1:8080', { connections: 1024 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade']);

function forwardable(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const request = {
      method: req.method as Dispatcher.HttpMethod,
      path: req.url ?? '/',
      headers: forwardable(req.headers),
      body: parts.length > 0 ? Buffer.concat(parts) : undefined,
    };
    const respond = ({ statusCode, headers }: Dispatcher.StreamFactoryData) => {
      res.writeHead(statusCode, forwardable(headers));
      return res; // undici writes the upstream body into the client response as it arrives
    };
    pool.stream(request, respond).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(err.message);
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`READY ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
exitWithParent();
