/**
 * The web console (console/, docs/console.md): the static files Vite built into dist/console, served under
 * /console. Hashed assets are cached for good (those built after the start are served too, so a rebuild
 * while the gateway runs works at once); index.html is revalidated, and any other path under
 * /console is the single-page app's (its own router reads it), so a reload on /console/logs/<id> works.
 * The console calls only /v1 with the key it was signed in with; these files need no key.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { GatewayError } from '../../core/errors.js';

/** dist/console at the package's root, from src/server/routes/ and from dist/server/routes/ alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Bundled code only: inline styles are the UI toolkit's; `unsafe-eval` is the config schema's compiled
 * validator. Nothing is loaded from elsewhere and nothing may frame the console. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function sendIndex(reply: FastifyReply) {
  return reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').sendFile('index.html');
}

/** A file under the root's `assets/` folder, where the build writes its hashed bundles. */
function isHashedAsset(root: string, file: string): boolean {
  return relative(root, file).split(sep)[0] === 'assets';
}

export async function registerConsoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIR): Promise<void> {
  if (!existsSync(`${dir}/index.html`)) {
    const notBuilt = async (_request: unknown, reply: FastifyReply) =>
      reply
        .code(404)
        .header('x-gateway-error-source', 'gateway')
        .send(new GatewayError('not_found', 'The console is not built: run `npm run build`').toBody());
    app.get('/console', notBuilt);
    app.get('/console/*', notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/console/',
    // A route per file that exists at start; every other path falls to the app's routes below.
    wildcard: false,
    index: false,
    cacheControl: false,
    // The build writes .br and .gz beside each bundle (console/vite.config.ts): a client that accepts one
    // gets it, about a quarter of the bytes.
    preCompressed: true,
    setHeaders(response, path) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.header(name, value);
      // It runs for sendFile too (index.html), after the route's own cache-control: a hashed asset is told
      // by its path under the console's root, never the root's own path, which may hold an `assets` folder.
      response.header('cache-control', isHashedAsset(dir, path) ? IMMUTABLE : 'no-cache');
    },
  });
  app.get('/console', (_request, reply) => reply.redirect('/console/'));
  app.get('/console/', (_request, reply) => sendIndex(reply));
  app.get('/console/*', (request, reply) => {
    if (request.url.startsWith('/console/assets/')) {
      // An asset built after the start (a rebuild while running: index.html, read at each request, names
      // the new bundle) has no route of its own.
      const asset = /^\/console\/(assets\/[\w.-]+)(?:\?|$)/.exec(request.url)?.[1];
      if (asset !== undefined && existsSync(join(dir, asset))) {
        return reply.headers(SECURITY_HEADERS).header('cache-control', IMMUTABLE).sendFile(asset);
      }
      // A missing asset is a 404, not the app: a stale page asking for an old bundle must not get HTML.
      return reply
        .code(404)
        .header('x-gateway-error-source', 'gateway')
        .send(new GatewayError('not_found', `No console file ${request.url.split('?')[0]}`).toBody());
    }
    return sendIndex(reply);
  });
}
