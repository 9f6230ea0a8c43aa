/**
 * A request whose body the gateway refuses is recorded like any other answered request: its 400, the
 * field named, the body as sent; on every model ingress.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { postTraced, uniqueId, waitForLogs } from '../core/support.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
});

describe('a request refused for its body', () => {
  it.each([
    ['/chat/completions', { model: 'gpt-4o-mini', messages: 'x' }, 'messages'],
    ['/embeddings', { model: 'text-embedding-3-small' }, 'input'],
    ['/responses', { model: 'gpt-4o-mini', input: 7 }, 'input'],
    ['/messages', { model: 'claude-x', messages: [] }, 'max_tokens'],
  ])('%s: is answered 400 naming the field, and recorded', async (path, body, param) => {
    const traceId = uniqueId('refused');
    const response = await postTraced(gateway, path, traceId, { 'x-gateway-provider': 'openai' }, body);
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { error: { message: string; param?: string } };
    expect(JSON.stringify(answer)).toContain(param);
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ status: 400, error_code: 'invalid_body', request_body: body });
  });
});
