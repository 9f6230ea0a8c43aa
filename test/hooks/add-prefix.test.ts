/**
 * default.addPrefix: the reference gateway's prefix mutator, on the request only. Where the prefix goes for
 * each of its parameters, a completion's prompt, calls it leaves alone, validation naming the field, and
 * the provider getting the prefixed request through the gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target } from '../routing/support.js';
import { context, runCheck } from './support.js';

type Json = Record<string, unknown>;

const chat = (...messages: Array<[string, unknown]>): Json => ({
  model: 'gpt-4o-mini',
  messages: messages.map(([role, content]) => ({ role, content })),
});

async function prefixed(request: Json, parameters: Json, extra: Parameters<typeof context>[0] = {}) {
  return runCheck('addPrefix', context({ ...extra, request }), { prefix: 'Be brief. ', ...parameters });
}

describe('default.addPrefix, the check', () => {
  it("prefixes the first user message's content by default, and passes", async () => {
    const result = await prefixed(chat(['system', 'sys'], ['user', 'one'], ['user', 'two']), {});
    expect(result.verdict).toBe(true);
    expect(result.transformed).toEqual(chat(['system', 'sys'], ['user', 'Be brief. one'], ['user', 'two']));
    expect(result.data).toEqual({
      applyToRole: 'user',
      addToExisting: true,
      onlyIfEmpty: false,
      added: true,
    });
  });

  it('puts a message of its own before it with addToExisting: false', async () => {
    const result = await prefixed(chat(['user', 'one']), { addToExisting: false });
    expect(result.transformed).toEqual(chat(['user', 'Be brief. '], ['user', 'one']));
  });

  it('adds a missing role: a system message first, another role last', async () => {
    expect((await prefixed(chat(['user', 'one']), { applyToRole: 'system' })).transformed).toEqual(
      chat(['system', 'Be brief. '], ['user', 'one']),
    );
    expect((await prefixed(chat(['system', 's']), { applyToRole: 'user' })).transformed).toEqual(
      chat(['system', 's'], ['user', 'Be brief. ']),
    );
  });

  it('with onlyIfEmpty, leaves a chat that has the role as it is', async () => {
    const result = await prefixed(chat(['system', 's'], ['user', 'one']), {
      applyToRole: 'system',
      onlyIfEmpty: true,
    });
    expect(result.transformed).toBeUndefined();
    expect(result).toMatchObject({ verdict: true, data: { added: false } });
    const added = await prefixed(chat(['user', 'one']), { applyToRole: 'system', onlyIfEmpty: true });
    expect(added.transformed).toEqual(chat(['system', 'Be brief. '], ['user', 'one']));
  });

  it('prefixes a content of parts in its first text part', async () => {
    const parts = [
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'https://x/y.png' } },
    ];
    const result = await prefixed(chat(['user', parts]), {});
    expect(result.transformed).toEqual(chat(['user', [{ type: 'text', text: 'Be brief. look' }, parts[1]]]));
  });

  it('prefixes a completion prompt, or each prompt of a batch', async () => {
    const one = await prefixed({ model: 'x', prompt: 'Hi' }, {}, { requestType: 'complete' });
    expect(one.transformed).toEqual({ model: 'x', prompt: 'Be brief. Hi' });
    const batch = await prefixed({ model: 'x', prompt: ['a', 'b'] }, {}, { requestType: 'complete' });
    expect(batch.transformed).toEqual({ model: 'x', prompt: ['Be brief. a', 'Be brief. b'] });
  });

  it('leaves embeddings, Messages and Responses calls alone, as the reference gateway does', async () => {
    const embed = await prefixed({ model: 'e', input: 'text' }, {}, { requestType: 'embed' });
    expect(embed.transformed).toBeUndefined();
    const messages = await prefixed(chat(['user', 'one']), {}, { callType: 'messages' });
    expect(messages.transformed).toBeUndefined();
    expect(messages.verdict).toBe(true);
  });

  it('is refused on the answer, and without a prefix or with a bad field, naming it', () => {
    expect(checkParameterError('default.addPrefix', { prefix: 'x' }, 'afterRequestHook')?.param).toBe('id');
    expect(checkParameterError('default.addPrefix', {}, 'beforeRequestHook')?.message).toBe(
      'default.addPrefix: parameters.prefix is required',
    );
    expect(checkParameterError('default.addPrefix', { prefix: '' }, 'beforeRequestHook')?.param).toBe(
      'parameters.prefix',
    );
    expect(
      checkParameterError('default.addPrefix', { prefix: 'x', applyToRole: 'tool' }, 'beforeRequestHook')
        ?.param,
    ).toBe('parameters.applyToRole');
    expect(
      checkParameterError('default.addPrefix', { prefix: 'x', onlyIfEmpty: 'yes' }, 'beforeRequestHook')
        ?.param,
    ).toBe('parameters.onlyIfEmpty');
  });
});

describe('default.addPrefix through the gateway', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'prefixed' })]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.close(), fake?.close()]);
  });

  it('the provider gets the prefixed request, and the hook says it transformed it', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [
        { id: 'sys', 'default.addPrefix': { prefix: 'Answer in French.', applyToRole: 'system' } },
      ],
    };
    const answer = await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello' }],
    });
    const sent = fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hello' },
    ]);
    const results = (answer as unknown as { hook_results: { before_request_hooks: Json[] } }).hook_results;
    expect(results.before_request_hooks[0]).toMatchObject({ id: 'sys', verdict: true, transformed: true });
  });
});
