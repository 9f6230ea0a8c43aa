/**
 * An API key's metadata goes with every call made with it, as Portkey's does: merged into the request's
 * `x-gateway-metadata`, the key's value winning a key both name, so that a team's key is found in the logs
 * by its team and met by the rate-limit policies and conditional routing of that team, whatever the client
 * sends. The `openai` SDK against a real gateway and a fake provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client as managementClient } from '../management/http.js';
import { client, logsOf, target, traceHeaders } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'meta' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

describe("an API key's metadata, and the body's end user", () => {
  it('is in the record of each call, over the same keys of the request metadata', async () => {
    const admin = managementClient(gateway.url, gateway.adminKey);
    const created = await admin.post('/api-keys', {
      name: 'search team',
      role: 'member',
      metadata: { team: 'search', cost_centre: 'cc-7' },
    });
    expect(created.status, created.text).toBe(200);
    const memberKey = (created.body as { key: string }).key;
    const { traceId, headers } = traceHeaders();
    await client(gateway, target(fake), {
      ...headers,
      'x-gateway-api-key': memberKey,
      'x-gateway-metadata': JSON.stringify({ env: 'dev', team: 'someone-else' }),
    }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.metadata).toEqual({ env: 'dev', team: 'search', cost_centre: 'cc-7' });
  });

  it('routes a conditional config by the key, whatever the request says', async () => {
    const admin = managementClient(gateway.url, gateway.adminKey);
    const created = await admin.post('/api-keys', {
      name: 'paid',
      role: 'member',
      metadata: { plan: 'paid' },
    });
    const paidKey = (created.body as { key: string }).key;
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [{ query: { 'metadata.plan': { $eq: 'paid' } }, then: 'paid' }],
        default: 'free',
      },
      targets: [
        { name: 'paid', ...target(fake, { override_params: { model: 'paid-model' } }) },
        { name: 'free', ...target(fake, { override_params: { model: 'free-model' } }) },
      ],
    };
    const ask = (key: string) =>
      client(gateway, config, {
        'x-gateway-api-key': key,
        'x-gateway-metadata': JSON.stringify({ plan: 'paid' }),
      }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect((await ask(paidKey)).model).toBe('paid-model');
    // The admin key has no plan: the request's own claim to one is what routes it.
    expect((await ask(gateway.adminKey)).model).toBe('paid-model');
    const free = await admin.post('/api-keys', { name: 'free', role: 'member', metadata: { plan: 'free' } });
    expect((await ask((free.body as { key: string }).key)).model).toBe('free-model');
  });

  it("records the body's end user as _user, unless the metadata names one", async () => {
    const ask = async (headers: Record<string, string>, user = 'end-user-42') => {
      const { traceId, headers: trace } = traceHeaders();
      await client(gateway, target(fake), { ...trace, ...headers }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        user,
      });
      return (await logsOf(gateway, traceId, 1))[0].metadata;
    };
    expect(await ask({})).toEqual({ _user: 'end-user-42' });
    // Longer than a metadata value may be: not recorded, rather than cut down to another user's id.
    expect(await ask({}, 'u'.repeat(513))).toEqual({});
    // Counted in characters (code points), as metadata is: an emoji is one, though two UTF-16 code units.
    const EMOJI = '\u{1F600}';
    expect(await ask({}, EMOJI.repeat(512))).toEqual({ _user: EMOJI.repeat(512) });
    expect(await ask({}, EMOJI.repeat(513))).toEqual({});
    expect(await ask({ 'x-gateway-metadata': JSON.stringify({ _user: 'named' }) })).toEqual({
      _user: 'named',
    });
  });
});
