/**
 * Checks configured with the parameters the reference gateway's users write, pasted as they are, through
 * the `openai` SDK against a real gateway.
 */
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'reference' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const chat = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] });

async function statusOf(
  config: Record<string, unknown>,
  model: string,
  metadata?: Record<string, string>,
): Promise<number> {
  const headers: Record<string, string> =
    metadata === undefined ? {} : { 'x-gateway-metadata': JSON.stringify(metadata) };
  return client(gateway, config, headers)
    .chat.completions.create(chat(model))
    .withResponse()
    .then(
      ({ response }) => response.status,
      (err: unknown) => (err instanceof APIError ? (err.status ?? 0) : -1),
    );
}

describe('default.modelWhitelist with metadataRules', () => {
  const config = () => ({
    ...target(fake),
    input_guardrails: [
      {
        id: 'models-by-tier',
        deny: true,
        'default.modelWhitelist': {
          models: ['gpt-4o-mini'],
          metadataRules: [
            { metadataKey: 'tier', values: ['enterprise'], models: ['gpt-4o', 'gpt-4o-mini'] },
            { metadataKey: 'team', values: ['research', 'labs'], models: ['o3'] },
          ],
        },
      },
    ],
  });

  it("allows the models of every rule the request's metadata matches, else the models list", async () => {
    expect(await statusOf(config(), 'gpt-4o', { tier: 'enterprise' })).toBe(200);
    expect(await statusOf(config(), 'o3', { tier: 'enterprise', team: 'labs' })).toBe(200);
    expect(await statusOf(config(), 'o3', { tier: 'enterprise' })).toBe(446);
    // No rule matches: the models list decides.
    expect(await statusOf(config(), 'gpt-4o-mini', { tier: 'free' })).toBe(200);
    expect(await statusOf(config(), 'gpt-4o', { tier: 'free' })).toBe(446);
    expect(await statusOf(config(), 'gpt-4o')).toBe(446);
  });

  it('without a models list, a request no rule matches is refused', async () => {
    const rulesOnly = {
      ...target(fake),
      input_guardrails: [
        {
          id: 'rules-only',
          deny: true,
          'default.modelWhitelist': {
            metadataRules: [{ metadataKey: 'tier', values: ['enterprise'], models: ['gpt-4o'] }],
          },
        },
      ],
    };
    expect(await statusOf(rulesOnly, 'gpt-4o', { tier: 'enterprise' })).toBe(200);
    expect(await statusOf(rulesOnly, 'gpt-4o', { tier: 'free' })).toBe(446);
  });

  it('a rule without models, or neither list, is a 400 naming the field', async () => {
    const badRule = {
      ...target(fake),
      input_guardrails: [
        { 'default.modelWhitelist': { metadataRules: [{ metadataKey: 'tier', values: ['a'] }] } },
      ],
    };
    const error = await client(gateway, badRule)
      .chat.completions.create(chat('gpt-4o'))
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).message).toContain('metadataRules');
    const neither = { ...target(fake), input_guardrails: [{ 'default.modelWhitelist': {} }] };
    const refused = await client(gateway, neither)
      .chat.completions.create(chat('gpt-4o'))
      .catch((err: unknown) => err);
    expect((refused as APIError).status).toBe(400);
    expect((refused as APIError).message).toContain('parameters.models');
  });
});

describe('the model checks with not: true', () => {
  const config = (check: Record<string, unknown>) => ({
    ...target(fake),
    input_guardrails: [{ id: 'blocked-models', deny: true, ...check }],
  });

  it('block the listed models, as the reference gateway reads not', async () => {
    const whitelist = config({
      'default.modelWhitelist': {
        models: ['o3'],
        metadataRules: [{ metadataKey: 'tier', values: ['free'], models: ['gpt-4o'] }],
        not: true,
      },
    });
    expect(await statusOf(whitelist, 'o3')).toBe(446);
    expect(await statusOf(whitelist, 'gpt-4o')).toBe(200);
    expect(await statusOf(whitelist, 'gpt-4o', { tier: 'free' })).toBe(446);
    expect(await statusOf(whitelist, 'o3', { tier: 'free' })).toBe(200);
    const rules = config({
      'default.modelRules': {
        rules: { defaults: ['o3'], metadata: { tier: { free: ['gpt-4o'] } } },
        not: true,
      },
    });
    expect(await statusOf(rules, 'o3')).toBe(446);
    expect(await statusOf(rules, 'gpt-4o')).toBe(200);
    expect(await statusOf(rules, 'gpt-4o', { tier: 'free' })).toBe(446);
  });

  it('explain a verdict as true of a blocked list as of an allowed one', async () => {
    const explained = async (model: string, parameters: Record<string, unknown>) => {
      const flagging = {
        ...target(fake),
        input_guardrails: [{ id: 'blocked-models', 'default.modelWhitelist': { ...parameters, not: true } }],
      };
      const { data } = await client(gateway, flagging).chat.completions.create(chat(model)).withResponse();
      const hooks = (
        data as unknown as { hook_results: { before_request_hooks: Array<{ checks: unknown[] }> } }
      ).hook_results.before_request_hooks;
      return hooks[0]!.checks[0] as { verdict: boolean; explanation: string };
    };
    expect(await explained('o3', { models: ['o3'] })).toEqual(
      expect.objectContaining({ verdict: false, explanation: 'Model "o3" is one of the listed models.' }),
    );
    expect(await explained('gpt-4o', { models: ['o3'] })).toEqual(
      expect.objectContaining({
        verdict: true,
        explanation: 'Model "gpt-4o" is not one of the listed models.',
      }),
    );
    const rulesOnly = { metadataRules: [{ metadataKey: 'tier', values: ['free'], models: ['o3'] }] };
    expect((await explained('o3', rulesOnly)).explanation).toBe(
      'No metadata rule matches the request and no default list is given: no model is listed.',
    );
  });
});

describe('a text check on an answer without text', () => {
  const toolCall = {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user' as const, content: 'what is the weather?' }],
    tools: [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object' } } }],
    tool_choice: 'required' as const,
  };
  const config = (onError?: string) => ({
    ...target(fake),
    output_guardrails: [
      {
        id: 'words',
        deny: true,
        'default.wordCount': { minWords: 1, maxWords: 500, ...(onError && { on_error: onError }) },
      },
    ],
  });

  it('gives no verdict: a tool-call answer passes by default, as with the reference gateway', async () => {
    const { data, response } = await client(gateway, config())
      .chat.completions.create(toolCall)
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.tool_calls).toHaveLength(1);
    const hooks = (data as unknown as { hook_results: { after_request_hooks: Array<{ checks: unknown[] }> } })
      .hook_results.after_request_hooks;
    expect(hooks[0]!.checks[0]).toMatchObject({
      verdict: true,
      error: { message: 'the answer has no text to check', timed_out: false },
      on_error: 'pass',
    });
    const refused = await client(gateway, config('fail'))
      .chat.completions.create(toolCall)
      .catch((err: unknown) => err);
    expect((refused as APIError).status).toBe(446);
  });
});

describe('a guardrail saying its type', () => {
  it("is a hook of that type, as the reference gateway reads a guardrail's type", async () => {
    const config = {
      ...target(fake),
      output_guardrails: [
        {
          id: 'rewriting',
          type: 'mutator',
          'default.pii': { categories: ['email'], redact: true },
          'default.contains': { words: ['[EMAIL_1]'] },
        },
      ],
    };
    const { data, response } = await client(gateway, config)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a@b.example' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[reference] [EMAIL_1]');
    const hook = (
      data as unknown as { hook_results: { after_request_hooks: Array<Record<string, unknown>> } }
    ).hook_results.after_request_hooks[0];
    // A mutator's checks run in order: the second sees the first one's rewrite.
    expect(hook).toMatchObject({ id: 'rewriting', type: 'mutator', verdict: true, transformed: true });
  });

  it('any other type is a 400 naming the field', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ type: 'filter', 'default.contains': { words: ['x'] } }],
    };
    const error = await client(gateway, config)
      .chat.completions.create(chat('gpt-4o-mini'))
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).message).toContain('input_guardrails[0].type');
  });
});

describe('default.allowedRequestTypes with the reference gateway lists', () => {
  const config = () => ({
    ...target(fake),
    input_guardrails: [
      {
        id: 'types',
        deny: true,
        'default.allowedRequestTypes': {
          allowedTypes: 'chatComplete, embed',
          blockedTypes: ['imageGenerate', 'createSpeech'],
        },
      },
    ],
  });

  it('takes a comma-separated list, and type names of calls this gateway does not check', async () => {
    expect(await statusOf(config(), 'gpt-4o-mini')).toBe(200);
    const completion = await client(gateway, config())
      .completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' })
      .catch((err: unknown) => err);
    expect((completion as APIError).status).toBe(446);
  });

  it('a name no call type has is a 400 naming it', async () => {
    const typo = {
      ...target(fake),
      input_guardrails: [{ 'default.allowedRequestTypes': { allowedTypes: 'chatComplete,chat' } }],
    };
    const error = await client(gateway, typo)
      .chat.completions.create(chat('gpt-4o-mini'))
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).message).toContain("parameters.allowedTypes names 'chat'");
  });
});

describe('default.modelRules', () => {
  const config = () => ({
    ...target(fake),
    input_guardrails: [
      {
        id: 'model-rules',
        deny: true,
        'default.modelRules': {
          rules: {
            defaults: ['gpt-4o-mini'],
            metadata: { tier: { enterprise: ['gpt-4o'], research: ['o3'] }, team: { labs: ['o3'] } },
          },
        },
      },
    ],
  });

  it('allows the models every metadata value of the request maps to, else the defaults', async () => {
    expect(await statusOf(config(), 'gpt-4o', { tier: 'enterprise' })).toBe(200);
    expect(await statusOf(config(), 'o3', { tier: 'enterprise', team: 'labs' })).toBe(200);
    expect(await statusOf(config(), 'gpt-4o-mini', { tier: 'enterprise' })).toBe(446);
    expect(await statusOf(config(), 'gpt-4o-mini', { tier: 'free' })).toBe(200);
    expect(await statusOf(config(), 'gpt-4o')).toBe(446);
  });

  it('rules naming no list, or a value mapped to no models, are a 400 naming the field', async () => {
    for (const [rules, field] of [
      [{}, 'parameters.rules'],
      [{ metadata: { tier: { free: [] } } }, 'parameters.rules.metadata.tier.free'],
    ] as const) {
      const bad = { ...target(fake), input_guardrails: [{ 'default.modelRules': { rules } }] };
      const error = await client(gateway, bad)
        .chat.completions.create(chat('gpt-4o'))
        .catch((err: unknown) => err);
      expect((error as APIError).status).toBe(400);
      expect((error as APIError).message).toContain(field);
    }
  });
});
