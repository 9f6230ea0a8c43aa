import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANAGEMENT_OPERATIONS } from '../../src/server/routes/management/operations.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, expectError } from './http.js';

let gateway: TestGateway;
let memberKey: string;

beforeAll(async () => {
  gateway = await startGateway();
  const created = await call(gateway.url, gateway.adminKey, 'POST', '/api-keys', {
    name: 'member',
    role: 'member',
  });
  memberKey = created.body.key;
});

afterAll(async () => {
  await gateway?.close();
});

/** A concrete path for an operation's template. */
const concrete = (path: string) => path.replace(/\{\w+\}/g, 'some-id');

// Only routes of the management scope answer a member with 403 (an unknown path would fall through to the
// pass-through route), so these cases also prove that every documented operation is served.
describe('roles on the management API', () => {
  it.each(MANAGEMENT_OPERATIONS.map((op) => [op.method.toUpperCase(), op.path] as const))(
    '%s %s: member key → 403, no key → 401, bad key → 401',
    async (method, path) => {
      // A body the route would accept from an admin, so the 403 is about the role alone.
      const body = method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined;
      expectError(await call(gateway.url, memberKey, method, concrete(path), body), 403, 'forbidden');
      expectError(await call(gateway.url, undefined, method, concrete(path), body), 401, 'missing_api_key');
      expectError(
        await call(gateway.url, 'gw-not-a-key-0000000000', method, concrete(path), body),
        401,
        'invalid_api_key',
      );
    },
  );

  it('a member hears 403 even for a body that is not JSON', async () => {
    const reply = await call(gateway.url, memberKey, 'POST', '/api-keys', undefined, {
      'content-type': 'application/json',
    });
    expectError(reply, 403, 'forbidden');
  });

  it('members may read the logs of their workspace', async () => {
    const reply = await call(gateway.url, memberKey, 'GET', '/logs');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.object).toBe('list');
  });

  it('the OpenAPI document lists every management operation with its body schema', async () => {
    const reply = await call(gateway.url, undefined, 'GET', '/openapi.json');
    expect(reply.status).toBe(200);
    for (const op of MANAGEMENT_OPERATIONS) {
      const item = reply.body.paths[`/v1${op.path}`]?.[op.method];
      expect(item, `${op.method} ${op.path}`).toBeDefined();
      if (op.requestBody) {
        const schema = item.requestBody.content['application/json'].schema;
        expect(schema.additionalProperties, `${op.method} ${op.path}`).toBe(false);
      }
    }
  });
});
