import { describe, expect, it } from 'vitest';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  GatewayConfigSchema,
  isStoredConfigRef,
  parseConfig,
  parseConfigHeader,
} from '../../src/gateway/config/index.js';
import { configCases } from './cases.js';
import { goodConfigs, richConfig, routableRichConfig } from './good-bodies.js';
import { expectGatewayError } from './assert-rejects.js';

describe('parseConfig', () => {
  it.each(configCases)('rejects $name (param $param)', ({ body, param }) => {
    const error = expectGatewayError(() => parseConfig(body), 'invalid_config', param);
    expect(error.message.startsWith(`${param} `)).toBe(true);
  });

  // A header value that does not start with `{` is read as a stored config id, so the array case is
  // reported against the header there; every other case reports the same param.
  const inline = configCases.filter((c) => !Array.isArray(c.body));
  it.each(inline)('rejects $name the same way when sent inline in the header', ({ body, param }) => {
    expectGatewayError(() => parseConfigHeader(JSON.stringify(body)), 'invalid_config', param);
  });

  it('the schema accepts a nested fallback / loadbalance / conditional config using every key', () => {
    expect(TypeCompiler.Compile(GatewayConfigSchema).Check(richConfig)).toBe(true);
  });

  it('accepts that config without the keys not yet executed', () => {
    const raw = JSON.parse(JSON.stringify(routableRichConfig)) as unknown;
    const config = parseConfig(raw);
    expect(config).toBe(raw);
    expect(config.targets?.[1]?.strategy?.mode).toBe('conditional');
  });

  it('the rich config really uses every key of the schema', () => {
    const used = new Set<string>();
    const visit = (node: Record<string, unknown>): void => {
      for (const key of Object.keys(node)) used.add(key);
      for (const child of (node.targets as Record<string, unknown>[] | undefined) ?? []) visit(child);
    };
    visit(richConfig);
    expect([...Object.keys(GatewayConfigSchema.properties)].filter((k) => !used.has(k))).toEqual([]);
  });

  it.each(goodConfigs)('accepts %j', (config) => {
    expect(() => parseConfig(config)).not.toThrow();
  });

  it('names api_key for a provider without credentials, unless Authorization carries them', () => {
    expectGatewayError(() => parseConfig({ provider: 'openai' }), 'invalid_config', 'config.api_key');
    expect(parseConfig({ provider: 'openai' }, { authorizationPresent: true })).toEqual({
      provider: 'openai',
    });
    const nested = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai' }, { provider: 'groq' }],
    };
    expectGatewayError(() => parseConfig(nested), 'invalid_config', 'config.targets[0].api_key');
    expect(() => parseConfig(nested, { authorizationPresent: true })).not.toThrow();
  });

  it('Authorization does not excuse a config with no usable combination', () => {
    expectGatewayError(
      () => parseConfig({ name: 'x' }, { authorizationPresent: true }),
      'invalid_config',
      'config',
    );
  });

  it('accepts complete cloud credentials in place of api_key', () => {
    expect(() =>
      parseConfig({ provider: 'bedrock', cloudc_access_key_id: 'a', cloudc_secret_access_key: 'b' }),
    ).not.toThrow();
    expect(() =>
      parseConfig({ provider: 'vertex-ai', cloudb_region: 'r', cloudb_project_id: 'p' }),
    ).not.toThrow();
    expectGatewayError(
      () => parseConfig({ provider: 'vertex-ai', cloudb_project_id: 'p' }),
      'invalid_config',
      'config.api_key',
    );
  });

  it.each([
    [{ virtualKey: 'vk' }, 'config.virtualKey', 'virtual_key'],
    [{ virtual_key: 'vk', overrideParams: { model: 'gpt-4o' } }, 'config.overrideParams', 'override_params'],
    [
      { virtual_key: 'vk', retry: { attempts: 2, onStatusCodes: [429] } },
      'config.retry.onStatusCodes',
      'on_status_codes',
    ],
    [{ virtual_key: 'vk', cache: { mode: 'simple', maxAge: 60 } }, 'config.cache.maxAge', 'max_age'],
    [
      { virtual_key: 'vk', strict_open_ai_compliance: false },
      'config.strict_open_ai_compliance',
      'strict_compat_compliance',
    ],
    [
      { provider: 'openai', api_key: 'k', openai_organization: 'org' },
      'config.openai_organization',
      'vendora_organization',
    ],
    [
      { provider: 'bedrock', aws_access_key_id: 'a', aws_secret_access_key: 'b' },
      'config.aws_access_key_id',
      'cloudc_access_key_id',
    ],
    [
      { provider: 'vertex-ai', vertex_region: 'r', vertex_project_id: 'p' },
      'config.vertex_region',
      'cloudb_region',
    ],
    [
      { provider: 'azure-ai', azure_endpoint_name: 'e' },
      'config.azure_endpoint_name',
      'cloudd_endpoint_name',
    ],
    [
      { strategy: { mode: 'fallback', onStatusCodes: [429] }, targets: [{ virtual_key: 'a' }] },
      'config.strategy.onStatusCodes',
      'on_status_codes',
    ],
  ])(
    "names our spelling of a key written in camelCase or with the reference gateway's vendor prefix (%j)",
    (config, param, ours) => {
      const error = expectGatewayError(() => parseConfig(config), 'invalid_config', param);
      expect(error.message).toContain(`${param} is not a known key: write ${ours} (allowed: `);
    },
  );

  it.each([
    ['fallback', 'conditions'],
    ['loadbalance', 'default'],
    ['single', 'conditions'],
  ] as const)(
    "refuses strategy.%s's %s, which only a conditional node reads, rather than ignore it",
    (mode, key) => {
      const strategy = {
        mode,
        ...(key === 'conditions' ? { conditions: [{ query: {}, then: 'a' }] } : { default: 'a' }),
      };
      const error = expectGatewayError(
        () => parseConfig({ strategy, targets: [{ name: 'a', virtual_key: 'a' }] }),
        'invalid_config',
        `config.strategy.${key}`,
      );
      expect(error.message).toContain(`only when strategy.mode is 'conditional' (this node's is '${mode}')`);
    },
  );

  it('suggests no spelling where ours has no such key', () => {
    const error = expectGatewayError(
      () => parseConfig({ provider: 'bedrock', aws_role_arn: 'r' }),
      'invalid_config',
      'config.aws_role_arn',
    );
    expect(error.message).toMatch(/^config\.aws_role_arn is not a known key \(allowed: /);
  });

  it('lists the allowed keys when one is misspelt', () => {
    expect(() => parseConfig({ retry: { attemps: 3 } })).toThrow(
      'config.retry.attemps is not a known key (allowed: attempts, on_status_codes, use_retry_after_headers, use_retry_after_header)',
    );
  });
});

describe('prompt_id, which prompt completions run (test/prompts/prompt-targets.test.ts)', () => {
  const creds = { provider: 'openai', api_key: 'sk-test' };

  it('is a config on its own, beside a provider, and in a nested target', () => {
    expect(parseConfig({ prompt_id: 'pp-123' })).toEqual({ prompt_id: 'pp-123' });
    expect(parseConfig({ ...creds, prompt_id: 'pp-123@latest' }).prompt_id).toBe('pp-123@latest');
    const config = {
      strategy: { mode: 'fallback' },
      targets: [creds, { strategy: { mode: 'single' }, targets: [{ ...creds, prompt_id: 'pp-2' }] }],
    };
    expect(parseConfigHeader(JSON.stringify(config))).toEqual(config);
  });

  it('must be a non-empty string', () => {
    expectGatewayError(() => parseConfig({ ...creds, prompt_id: '' }), 'invalid_config', 'config.prompt_id');
  });

  it('checks the shape of hooks: a malformed hook is invalid_config', () => {
    expectGatewayError(
      () => parseConfig({ input_guardrails: [5] }),
      'invalid_config',
      'config.input_guardrails[0]',
    );
    expectGatewayError(
      () => parseConfig({ ...creds, before_request_hooks: [{ type: 'guardrail' }] }),
      'invalid_config',
      'config.before_request_hooks[0].id',
    );
  });

  it('accepts hooks and guardrails, which run (test/e2e/hooks.test.ts), checks validated', () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-test',
      before_request_hooks: [
        { id: 'pii', checks: [{ id: 'default.regexMatch', parameters: { rule: 'x' } }] },
      ],
      after_request_hooks: [{ id: 'tone', async: true, on_fail: { deny: false } }],
      input_guardrails: [{ id: 'block-x', deny: true, 'default.contains': { words: ['x'] } }],
      output_guardrails: ['gr-out'],
    };
    expect(parseConfig(config)).toEqual(config);
    expectGatewayError(
      () =>
        parseConfig({
          ...config,
          before_request_hooks: [{ id: 'r', checks: [{ id: 'default.regexMatch', parameters: {} }] }],
        }),
      'invalid_config',
      'config.before_request_hooks[0].checks[0].parameters.rule',
    );
  });
});

describe('parseConfigHeader', () => {
  it('parses inline JSON (leading whitespace allowed)', () => {
    const result = parseConfigHeader('  {"retry":{"attempts":2}}');
    expect(isStoredConfigRef(result)).toBe(false);
    expect(result).toEqual({ retry: { attempts: 2 } });
  });

  it('returns a stored-config marker for an id or slug', () => {
    for (const id of ['pc-prod-fallback', 'cfg_01HZX5R2S9TQ8W3V4Y6B7C8D9E']) {
      const result = parseConfigHeader(id);
      expect(isStoredConfigRef(result)).toBe(true);
      expect(result).toEqual({ storedConfigId: id });
    }
  });

  it.each(['{"retry":', '{retry: {attempts: 2}}', '{"a":1}}'])('rejects malformed JSON %s', (value) => {
    const error = expectGatewayError(() => parseConfigHeader(value), 'invalid_config', 'x-gateway-config');
    expect(error.message).toMatch(/not valid JSON/);
  });

  it.each(['', '   ', '[1,2]', '"pc-prod"', 'has space', 'null'])(
    'rejects %j as neither JSON object nor id',
    (value) => {
      if (value === 'null') {
        // "null" is a well-formed id; it is the store that will not find it.
        expect(parseConfigHeader(value)).toEqual({ storedConfigId: 'null' });
        return;
      }
      expectGatewayError(() => parseConfigHeader(value), 'invalid_config', 'x-gateway-config');
    },
  );

  it('passes the Authorization option through to the rules', () => {
    expectGatewayError(() => parseConfigHeader('{"provider":"openai"}'), 'invalid_config', 'config.api_key');
    expect(parseConfigHeader('{"provider":"openai"}', { authorizationPresent: true })).toEqual({
      provider: 'openai',
    });
  });
});

describe('messages for pattern-checked config keys', () => {
  it('explains custom_host and forward_headers', () => {
    expect(() => parseConfig({ provider: 'openai', custom_host: 'localhost:8000' })).toThrow(
      'config.custom_host must be an http or https URL',
    );
    expect(() => parseConfig({ retry: { attempts: 1 }, forward_headers: ['a b'] })).toThrow(
      'config.forward_headers[0] must be an HTTP header name',
    );
  });
});
