/**
 * The final writes of a stop (the log writer's close) wait for the calls still running, as the pipeline
 * counts them, and write their records: a call cut by the stop is recorded a few turns of the loop after its
 * connection was destroyed, or later on a busy process, and a close that ended as soon as nothing was
 * buffered lost that record. Here a call under way (a model call, a pass-through) ends only once the close
 * has begun, its client gone.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSilentProvider, type SilentProvider } from '../helpers/silent-provider.js';
import { CHAT_BODY, providerHeaders, sleep, uniqueId } from './support.js';

let gateway: TestGateway;
// The call is under way until its client goes.
let silent: SilentProvider;

beforeAll(async () => {
  silent = await startSilentProvider();
});
afterEach(async () => {
  await gateway?.close();
});
afterAll(async () => {
  await silent?.close();
});

it.each([
  ['a model call', '/chat/completions'],
  ['a pass-through', '/rerank'],
])('the final writes wait for %s still running, and write its record', async (_kind, path) => {
  gateway = await startGateway({ env: { GATEWAY_LOG_FLUSH_INTERVAL_MS: '600000' } });
  silent.seen.length = 0;
  const traceId = uniqueId('final-writes');
  const client = new AbortController();
  const call = fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      ...providerHeaders(gateway, `${silent.url}/v1`),
      'content-type': 'application/json',
      'x-gateway-trace-id': traceId,
    },
    body: JSON.stringify(CHAT_BODY),
    signal: client.signal,
  }).catch(() => 'gone');
  expect(await silent.taken()).toEqual([`POST /v1${path}`]);

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
