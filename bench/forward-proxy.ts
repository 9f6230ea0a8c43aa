// The floor under any JSON gateway, one step above the bare proxy: the request body is parsed as JSON and
// serialised again for the upstream (through undici's pool), and the answer is read whole before it is
// sent, as a gateway must to read its usage. `FRAMEWORK=fastify` serves the same from a Fastify route
// (Fastify's body parsing and reply), to tell what the framework costs. Nothing else: no keys, no
// config, no records. Prints `READY <port>`; UPSTREAM is the upstream origin. Used by bench/compare.ts
// (`--a forward`, `--a fastify-forward`).
import Fastify from 'fastify';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { exitWithParent } from './exit-with-parent.js';

const pool = new Pool(process.env.UPSTREAM ?? 'http://127.0.0.1:8080', { connections: 1024 });

async function forward(
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const authorization = headers.authorization;
  const { statusCode, body: answer } = await pool.request({
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json',
      ...(typeof authorization === 'string' && { authorization }),
    },
    body: JSON.stringify(body),
  });
  return { status: statusCode, text: await answer.text() };
}

const port = Number(process.env.PORT ?? 0);
const ready = (address: AddressInfo) => console.log(`READY ${address.port}`);

if (process.env.FRAMEWORK === 'fastify') {
  const app = Fastify({ logger: false });
  app.post('/*', async (request, reply) => {
    const { status, text } = await forward(request.url, request.headers, request.body);
    return reply.code(status).header('content-type', 'application/json').send(text);
  });
  await app.listen({ port, host: '127.0.0.1' });
  ready(app.server.address() as AddressInfo);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
} else {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('the body is not JSON');
        return;
      }
      forward(req.url ?? '/', req.headers, body).then(
        ({ status, text }) => {
          res.writeHead(status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          });
          res.end(text);
        },
        (err: Error) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(err.message);
        },
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', () => ready(server.address() as AddressInfo));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
exitWithParent();
