/**
 * An embeddings request split into more calls than run at once (EMBEDDING_CALLS_AT_ONCE) ends by the
 * request's deadline (GATEWAY_REQUEST_TIMEOUT_MS): a call started after others ended has what is left of
 * it, not a whole request timeout of its own, as the calls of `n` have (fanout.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EMBEDDING_CALLS_AT_ONCE } from '../../src/gateway/embeddings-fanout.js';
import { COHERE_TEXTS_PER_CALL } from '../../src/providers/cohere/cohere-embeddings.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';

/** How long the relay holds each call before passing it on. */
const HOLD_MS = 1000;
const TIMEOUT_MS = 1500;

let gateway: TestGateway;
let cohere: FakeCohere;
let relay: Server;
let relayUrl: string;

beforeAll(async () => {
  cohere = await startFakeCohere();
  // Holds every call HOLD_MS, then answers as Cohere does: each round of calls takes HOLD_MS.
  relay = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      setTimeout(() => {
        void fetch(`${cohere.url}${req.url ?? '/'}`, {
          method: req.method,
          headers: {
            authorization: req.headers.authorization ?? '',
            'content-type': 'application/json',
          },
          body: Buffer.concat(chunks),
        })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': 'application/json' });
            res.end(await answer.text());
          })
          .catch(() => res.destroy());
      }, HOLD_MS);
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  gateway = await startGateway({ env: { GATEWAY_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(async () => {
  await gateway?.close();
  relay?.closeAllConnections();
  await new Promise((resolve) => relay?.close(resolve));
  await cohere?.close();
});

it('a request split into two rounds of calls ends by its deadline', async () => {
  // One call more than run at once: a second round starts when the first ends, HOLD_MS in.
  const input = Array.from(
    { length: COHERE_TEXTS_PER_CALL * (EMBEDDING_CALLS_AT_ONCE + 1) },
    (_, i) => `text ${i}`,
  );
  const config = {
    provider: 'cohere',
    api_key: cohere.apiKey,
    custom_host: relayUrl,
  };
  const response = await postWithConfig(gateway, '/embeddings', config, { model: 'embed-v4.0', input });
  const text = await response.text();
  // Two rounds take 2 × HOLD_MS, past the request's 1.5 s: the second round's call is cut at the deadline, not 1.5 s after
  // it starts.
  expect(response.status, text.slice(0, 300)).toBe(408);
  expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('request_timeout');
});
