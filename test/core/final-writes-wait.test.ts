/**
 * The final writes of a stop (the log writer's close) wait for the calls still running, as the pipeline
 * counts them, and write their records: a call cut by the stop is recorded a few turns of the loop after its
 * connection was destroyed, or later on a busy process, and a close that ended as soon as nothing was
 * buffered lost that record. Here a call under way (a model call, a pass-through) ends only once the close
 * has begun, its client gone.
 */
import http from 'node:http';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHAT_BODY, providerHeaders, sleep, uniqueId } from './support.js';

let gateway: TestGateway;
let silent: http.Server;
let silentUrl: string;
const seen: string[] = [];

beforeAll(async () => {
  // Takes every request and never answers it: the call is under way until its client goes.
  silent = http.createServer((request) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}/v1`;
});
afterEach(async () => {
  await gateway?.close();
});
afterAll(async () => {
  silent?.closeAllConnections();
  await new Promise((done) => silent?.close(done));
});

it.each([
  ['a model call', '/chat/completions'],
  ['a pass-through', '/rerank'],
])('the final writes wait for %s still running, and write its record', async (_kind, path) => {
  gateway = await startGateway({ env: { GATEWAY_LOG_FLUSH_INTERVAL_MS: '600000' } });
  seen.length = 0;
  const traceId = uniqueId('final-writes');
  const client = new AbortController();
  const call = fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      ...providerHeaders(gateway, silentUrl),
      'content-type': 'application/json',
      'x-gateway-trace-id': traceId,
    },
    body: JSON.stringify(CHAT_BODY),
    signal: client.signal,
  }).catch(() => 'gone');
  for (let i = 0; i < 250 && seen.length === 0; i++) await sleep(20);
  expect(seen).toEqual([`POST /v1${path}`]);

  const { logWriter, store } = gateway.server.deps;
  const writing = logWriter.close(10_000);
  // Well after the close began with nothing buffered: the call ends, its client gone, and is recorded.
  await sleep(100);
  client.abort();
  expect(await call).toBe('gone');
  await writing;

  const page = await store.listLogs({
    workspace_id: gateway.server.bootstrap.workspace.id,
    trace_id: traceId,
    limit: 10,
  });
  expect(page.data.map((record) => record.status)).toEqual([499]);
});
