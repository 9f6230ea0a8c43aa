/**
 * A stored config or guardrail sent back as it was shown: its `[REDACTED]` credentials stand for the
 * stored values while they still go where they went, and are refused anywhere else.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/observability/redact.js';
import type { TSchema } from '@sinclair/typebox';
import { BUILT_IN_CHECKS } from '../../src/hooks/registry.js';
import {
  ADDRESS_FIELDS,
  keepRedactedPromptValues,
  keepRedactedValues,
} from '../../src/server/routes/management/redacted-values.js';

type Json = Record<string, unknown>;

const guardrail = (url: string, authorization: string) => ({
  checks: [
    { id: 'default.webhook', parameters: { webhookURL: url, headers: { Authorization: authorization } } },
  ],
  deny: true,
});

describe('keepRedactedValues', () => {
  it("keeps a webhook's header value when its URL is the same", () => {
    const stored = guardrail('https://hooks.example/a', 'Bearer hook-secret-1');
    const sent = { ...guardrail('https://hooks.example/a', '[REDACTED]'), deny: false };
    expect(keepRedactedValues(sent, stored, 'guardrail')).toEqual({
      ...guardrail('https://hooks.example/a', 'Bearer hook-secret-1'),
      deny: false,
    });
  });

  it('refuses it, naming it, when the URL changed or there was no value', () => {
    const stored = guardrail('https://hooks.example/a', 'Bearer hook-secret-1');
    expect(() =>
      keepRedactedValues(guardrail('https://elsewhere.example/', '[REDACTED]'), stored, 'guardrail'),
    ).toThrow(expect.objectContaining({ param: 'guardrail.checks[0].parameters.headers.Authorization' }));
    expect(() =>
      keepRedactedValues({ provider: 'openai', api_key: '[REDACTED]' }, { provider: 'openai' }, 'config'),
    ).toThrow(expect.objectContaining({ param: 'config.api_key' }));
  });

  it("keeps each target's own key in place, and refuses one whose provider changed", () => {
    const stored = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-openai-secret' },
        { provider: 'anthropic', api_key: 'sk-ant-secret' },
      ],
    };
    const shown = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: '[REDACTED]' },
        { provider: 'anthropic', api_key: '[REDACTED]' },
      ],
    };
    expect(keepRedactedValues(shown, stored, 'config')).toEqual(stored);
    const swapped = { ...shown, targets: [shown.targets[1], shown.targets[0]] };
    expect(() => keepRedactedValues(swapped, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.targets[0].api_key' }),
    );
  });

  it("refuses a service account's private key once its token_uri (where assertions it signs go) changed", () => {
    const account = (tokenUri: string, privateKey: string) => ({
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_project_id: 'ours',
      cloudb_service_account_json: {
        client_email: 'gateway@ours.iam.gserviceaccount.com',
        private_key: privateKey,
        token_uri: tokenUri,
      },
    });
    const stored = account('https://oauth2.googleapis.com/token', '-----BEGIN PRIVATE KEY-----\nMII…');
    const shown = redact(stored);
    expect(keepRedactedValues(shown, stored, 'config')).toEqual(stored);
    expect(() =>
      keepRedactedValues(account('https://tokens.attacker.example/', '[REDACTED]'), stored, 'config'),
    ).toThrow(expect.objectContaining({ param: 'config.cloudb_service_account_json.private_key' }));
  });

  it("refuses a kept credential once a target below drops or adds its own (it takes its parent's when it has none)", () => {
    const bedrock = {
      provider: 'bedrock',
      cloudc_access_key_id: 'AKIA-root',
      cloudc_secret_access_key: 'root-secret',
      cloudc_region: 'us-east-1',
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: 'https://evil.example/', cloudc_access_key_id: 'AKIA-own' }],
    };
    const shown = redact(bedrock, (key) => key.startsWith('cloudc_') && key !== 'cloudc_region') as Json;
    expect(keepRedactedValues(shown, bedrock, 'config')).toEqual(bedrock);
    expect(() =>
      keepRedactedValues(
        { ...shown, targets: [{ custom_host: 'https://evil.example/' }] },
        bedrock,
        'config',
      ),
    ).toThrow(expect.objectContaining({ param: 'config.cloudc_access_key_id' }));

    const vertex = {
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_service_account_json: { private_key: 'root-key' },
      targets: [{ custom_host: 'https://evil.example/' }],
    };
    const sent = { ...vertex, cloudb_service_account_json: '[REDACTED]' };
    expect(keepRedactedValues(sent, vertex, 'config')).toEqual(vertex);
    const added = { ...sent, targets: [{ custom_host: 'https://evil.example/', api_key: 'sk-new' }] };
    expect(() => keepRedactedValues(added, vertex, 'config')).toThrow(
      expect.objectContaining({ param: 'config.cloudb_service_account_json' }),
    );
  });

  it('refuses an Azure key whose resource name (its host) changed', () => {
    const stored = { provider: 'azure-openai', api_key: 'azure-secret-1', cloudd_resource_name: 'ours' };
    const sent = { ...stored, api_key: '[REDACTED]', cloudd_resource_name: 'theirs' };
    expect(() => keepRedactedValues(sent, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.api_key' }),
    );
  });

  it('redacts headers given as JSON text, and keeps their stored values when sent back as shown', () => {
    const stored = {
      checks: [
        {
          id: 'default.webhook',
          parameters: {
            webhookURL: 'https://hooks.example/a',
            headers: '{"Authorization":"Bearer hook-secret-2"}',
          },
        },
      ],
    };
    const shown = redact(stored) as typeof stored;
    expect(JSON.stringify(shown)).not.toContain('hook-secret-2');
    expect(shown.checks[0].parameters.headers).toBe('{"Authorization":"[REDACTED]"}');
    expect(keepRedactedValues(shown, stored, 'guardrail')).toEqual(stored);
    const moved = structuredClone(shown);
    moved.checks[0].parameters.webhookURL = 'https://elsewhere.example/';
    expect(() => keepRedactedValues(moved, stored, 'guardrail')).toThrow(
      expect.objectContaining({ param: 'guardrail.checks[0].parameters.headers.Authorization' }),
    );
  });

  it("refuses a log check's header once its logURL (where the header is sent) changed", () => {
    const log = (logURL: string, authorization: string) => ({
      'default.log': { logURL, headers: { Authorization: authorization } },
      deny: false,
    });
    const stored = log('https://siem.example/ingest', 'Bearer siem-secret');
    const shown = redact(stored);
    expect(keepRedactedValues(shown, stored, 'guardrail')).toEqual(stored);
    expect(() =>
      keepRedactedValues(log('https://collector.attacker.example/', '[REDACTED]'), stored, 'guardrail'),
    ).toThrow(expect.objectContaining({ param: 'guardrail.default.log.headers.Authorization' }));
  });

  it("refuses it in a config's inline hook too, as a prompt's inline config is the same document", () => {
    const config = (logURL: string, authorization: string) => ({
      provider: 'openai',
      api_key: 'sk-openai-secret',
      before_request_hooks: [
        {
          id: 'audit',
          checks: [{ id: 'default.log', parameters: { logURL, headers: { Authorization: authorization } } }],
        },
      ],
    });
    const stored = config('https://siem.example/ingest', 'Bearer siem-secret');
    expect(keepRedactedValues(redact(stored), stored, 'config')).toEqual(stored);
    const moved = config('https://collector.attacker.example/', '[REDACTED]');
    moved.api_key = '[REDACTED]';
    // The whole document is refused, naming its first [REDACTED]: the provider's key too, which would go
    // where it went, since a document whose destinations changed must send all its secrets again.
    expect(() => keepRedactedValues(moved, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.api_key' }),
    );
    moved.api_key = 'sk-openai-secret';
    expect(() => keepRedactedValues(moved, stored, 'config')).toThrow(
      expect.objectContaining({
        param: 'config.before_request_hooks[0].checks[0].parameters.headers.Authorization',
      }),
    );
  });

  it('refuses a key once a target below that takes it (names no provider or virtual key) adds or changes an address', () => {
    const stored = { provider: 'openai', api_key: 'sk-REAL-SECRET', targets: [{ retry: { attempts: 1 } }] };
    const moved = {
      provider: 'openai',
      api_key: '[REDACTED]',
      targets: [{ retry: { attempts: 2 }, custom_host: 'https://evil.example/v1' }],
    };
    expect(() => keepRedactedValues(moved, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.api_key' }),
    );
    // Deeper too, and for any address field (an Azure resource name is a host).
    const deep = {
      provider: 'azure-openai',
      api_key: 'azure-secret',
      cloudd_resource_name: 'ours',
      targets: [{ targets: [{ retry: { attempts: 1 } }] }],
    };
    const deepMoved = structuredClone(deep) as typeof deep & {
      targets: Array<{ targets: Array<Record<string, unknown>> }>;
    };
    deepMoved.api_key = '[REDACTED]';
    deepMoved.targets[0].targets[0].cloudd_resource_name = 'theirs';
    expect(() => keepRedactedValues(deepMoved, deep, 'config')).toThrow(
      expect.objectContaining({ param: 'config.api_key' }),
    );
    // A target's own key is refused as well when a target below it that takes it moves.
    const nested = { targets: [{ provider: 'openai', api_key: 'sk-nested', targets: [{ weight: 1 }] }] };
    expect(() =>
      keepRedactedValues(
        {
          targets: [
            {
              provider: 'openai',
              api_key: '[REDACTED]',
              targets: [{ weight: 1, custom_host: 'https://evil.example/' }],
            },
          ],
        },
        nested,
        'config',
      ),
    ).toThrow(expect.objectContaining({ param: 'config.targets[0].api_key' }));
    // A target that was its own provider and now takes its parent's, at the host it had, moves the key too.
    const own = {
      provider: 'openai',
      api_key: 'sk-root',
      targets: [{ provider: 'openai', api_key: 'sk-child', custom_host: 'https://evil.example/' }],
    };
    expect(() =>
      keepRedactedValues(
        { provider: 'openai', api_key: '[REDACTED]', targets: [{ custom_host: 'https://evil.example/' }] },
        own,
        'config',
      ),
    ).toThrow(expect.objectContaining({ param: 'config.api_key' }));
  });

  it('keeps a key while only settings that are no destination change, and refuses it once any destination changes', () => {
    const stored = {
      provider: 'openai',
      api_key: 'sk-root',
      custom_host: 'https://api.openai.example/v1',
      targets: [
        { retry: { attempts: 1 }, custom_host: 'https://eu.openai.example/v1' },
        { provider: 'anthropic', api_key: 'sk-ant' },
      ],
    };
    // Other settings change, and a new target names no destination: every destination is where it was.
    const sent = {
      provider: 'openai',
      api_key: '[REDACTED]',
      custom_host: 'https://api.openai.example/v1',
      targets: [
        { retry: { attempts: 3 }, custom_host: 'https://eu.openai.example/v1' },
        { provider: 'anthropic', api_key: '[REDACTED]' },
        { weight: 2 },
      ],
    };
    expect(keepRedactedValues(sent, stored, 'config')).toEqual({
      ...sent,
      api_key: 'sk-root',
      targets: [sent.targets[0], stored.targets[1], sent.targets[2]],
    });
    // A target going elsewhere with its own new key changes the document's destinations: the root's key
    // must be sent again, though it would still go where it went (the rule is one for the whole document).
    const elsewhere = {
      ...sent,
      targets: [
        sent.targets[0],
        { provider: 'mistral-ai', api_key: 'sk-mistral', custom_host: 'https://mistral.example/v1' },
      ],
    };
    expect(() => keepRedactedValues(elsewhere, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.api_key' }),
    );
  });

  it('keeps an override_params secret only while every target below, whatever its provider, keeps its address', () => {
    // override_params go into the body of every call below the node, each target's own provider's too.
    const stored = {
      override_params: { user_api_key: 'user-secret' },
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai', api_key: 'sk-a' }],
    };
    const sent = (targets: unknown[]) => ({
      override_params: { user_api_key: '[REDACTED]' },
      strategy: { mode: 'loadbalance' },
      targets,
    });
    expect(keepRedactedValues(sent([{ provider: 'openai', api_key: 'sk-b' }]), stored, 'config')).toEqual({
      ...sent([{ provider: 'openai', api_key: 'sk-b' }]),
      override_params: stored.override_params,
    });
    for (const targets of [
      [{ provider: 'openai', api_key: 'sk-b', custom_host: 'https://evil.example/v1' }],
      [
        { provider: 'openai', api_key: 'sk-a' },
        { provider: 'mistral-ai', api_key: 'sk-m' },
      ],
    ]) {
      expect(() => keepRedactedValues(sent(targets), stored, 'config'), JSON.stringify(targets)).toThrow(
        expect.objectContaining({ param: 'config.override_params.user_api_key' }),
      );
    }
  });

  it("keeps a prompt's parameter secrets only while its config sends calls to the same places", () => {
    const stored = {
      parameters: { user_api_key: 'user-secret' },
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-a' }] },
    };
    const sent = (config: unknown) => ({ parameters: { user_api_key: '[REDACTED]' }, config });
    // The same addresses written in another order, with other settings: kept.
    const reordered = {
      targets: [{ api_key: 'sk-b', provider: 'openai' }],
      strategy: { mode: 'loadbalance' },
    };
    expect(keepRedactedPromptValues(sent(reordered), stored)).toEqual({
      parameters: stored.parameters,
      config: reordered,
    });
    for (const config of [
      'some-config',
      undefined,
      { strategy: { mode: 'fallback' }, targets: [{ provider: 'anthropic', api_key: 'sk-b' }] },
      {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', api_key: 'sk-b' },
          { provider: 'openai', api_key: 'sk-c' },
        ],
      },
    ]) {
      expect(() => keepRedactedPromptValues(sent(config), stored), JSON.stringify(config)).toThrow(
        expect.objectContaining({ param: 'parameters.user_api_key' }),
      );
    }
    const byName = { parameters: { user_api_key: 'user-secret' }, config: 'ours' };
    expect(keepRedactedPromptValues(sent('ours'), byName)).toEqual(byName);
  });

  it("counts every URL field of every built-in check's parameters as an address", () => {
    /** Property names of string fields, at any depth of a schema, whose name says URL, URI, host or endpoint. */
    const urlFields = (schema: TSchema): string[] => {
      const found: string[] = [];
      const visit = (node: unknown): void => {
        if (node === null || typeof node !== 'object') return;
        const { properties, anyOf, allOf, oneOf, items } = node as Record<string, unknown>;
        for (const [name, field] of Object.entries((properties ?? {}) as Record<string, TSchema>)) {
          const strings = JSON.stringify(field).includes('"string"');
          if (strings && /url|uri|host|endpoint/i.test(name)) found.push(name);
          visit(field);
        }
        for (const list of [anyOf, allOf, oneOf]) if (Array.isArray(list)) list.forEach(visit);
        visit(items);
      };
      visit(schema);
      return found;
    };
    const fields = BUILT_IN_CHECKS.flatMap((check) => urlFields(check.parameters));
    expect(fields).toEqual(expect.arrayContaining(['webhookURL', 'logURL']));
    for (const field of fields) expect(ADDRESS_FIELDS, field).toContain(field);
  });

  it("refuses a node's key once its override_params.model names another catalog provider (@slug/model)", () => {
    const stored = { override_params: { model: 'gpt-4o' }, api_key: 'sk-node' };
    const moved = { override_params: { model: '@evil-slug/m' }, api_key: '[REDACTED]' };
    expect(() => keepRedactedValues(moved, stored, 'config')).toThrow(
      expect.objectContaining({
        param: 'config.api_key',
        message: expect.stringContaining('destinations changed'),
      }),
    );
    // A target's model naming a catalog provider counts as well, and a prompt's model too.
    const targets = { targets: [{ provider: 'openai', api_key: 'sk-t', model: 'gpt-4o' }] };
    expect(() =>
      keepRedactedValues(
        { targets: [{ provider: 'openai', api_key: '[REDACTED]', model: '@evil/m' }] },
        targets,
        'config',
      ),
    ).toThrow(expect.objectContaining({ param: 'config.targets[0].api_key' }));
    const prompt = { parameters: { user_api_key: 'user-secret', model: 'gpt-4o' }, config: 'ours' };
    expect(() =>
      keepRedactedPromptValues(
        { parameters: { user_api_key: '[REDACTED]', model: '@evil/m' }, config: 'ours' },
        prompt,
      ),
    ).toThrow(expect.objectContaining({ param: 'parameters.user_api_key' }));
  });

  it('refuses an override_params secret once a webhook or a stored guardrail is added beside it', () => {
    const stored = { provider: 'openai', api_key: 'sk-a', override_params: { user_api_key: 'user-secret' } };
    const sent = { provider: 'openai', api_key: 'sk-a', override_params: { user_api_key: '[REDACTED]' } };
    const webhook = {
      ...sent,
      before_request_hooks: [
        { id: 'h', checks: [{ id: 'default.webhook', parameters: { webhookURL: 'https://evil.example/' } }] },
      ],
    };
    const guardrail = { ...sent, input_guardrails: ['evil-guardrail'] };
    for (const moved of [webhook, guardrail]) {
      expect(() => keepRedactedValues(moved, stored, 'config'), JSON.stringify(moved)).toThrow(
        expect.objectContaining({ param: 'config.override_params.user_api_key' }),
      );
    }
    // The same in a prompt's inline config, for a parameter secret.
    const prompt = {
      parameters: { user_api_key: 'user-secret' },
      config: { provider: 'openai', api_key: 'sk-a' },
    };
    expect(() =>
      keepRedactedPromptValues(
        {
          parameters: { user_api_key: '[REDACTED]' },
          config: { provider: 'openai', api_key: 'sk-a', output_guardrails: ['evil-guardrail'] },
        },
        prompt,
      ),
    ).toThrow(expect.objectContaining({ param: 'parameters.user_api_key' }));
  });

  it("refuses an override_params secret once a target's prompt_id (its calls' destination) changes", () => {
    const stored = { override_params: { user_api_key: 'user-secret' }, targets: [{ prompt_id: 'ours' }] };
    const moved = {
      override_params: { user_api_key: '[REDACTED]' },
      targets: [{ prompt_id: 'evil-prompt' }],
    };
    expect(() => keepRedactedValues(moved, stored, 'config')).toThrow(
      expect.objectContaining({ param: 'config.override_params.user_api_key' }),
    );
    expect(keepRedactedValues({ ...moved, targets: stored.targets }, stored, 'config')).toEqual(stored);
  });

  it('leaves a [REDACTED] text under a key that holds no credential as it is', () => {
    const sent = { provider: 'openai', api_key: 'sk-new', metadata: { note: '[REDACTED]' } };
    expect(keepRedactedValues(sent, {}, 'config')).toEqual(sent);
  });
});
