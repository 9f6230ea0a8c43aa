/**
 * A stored guardrail's definition is the config's inline guardrail item: what the item schema accepts in
 * a config, the definition accepts, and the OpenAPI document describes it with the same schema.
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { parseConfig } from '../../src/gateway/config/index.js';
import {
  GuardrailDefinitionSchema,
  parseGuardrailDefinition,
} from '../../src/gateway/config/guardrail-definition.js';
import { buildOpenApiDocument } from '../../src/server/openapi.js';

const good = [
  { 'default.contains': { operator: 'none', words: ['x'] } },
  { 'default.contains': { words: ['x'] }, 'default.wordCount': { minWords: 1 }, deny: true, async: false },
  {
    id: 'pii',
    'default.pii': { redact: true },
    on_fail: { deny: true, feedback: { value: -1, weight: 2, metadata: { team: 'a' } } },
    on_success: { feedback: { value: 1 } },
  },
];

/** Checks the registry knows, with parameters it accepts, on the side they run on. */
const goodChecks = [
  { 'default.requiredMetadataKeys': { metadataKeys: ['team'] }, deny: true },
  { 'default.contains': { words: ['x'], not: true, timeout: 250, on_error: 'fail' } },
  { 'default.webhook': { webhookURL: 'https://hooks.example/v', headers: { Authorization: 'Bearer t' } } },
  { 'default.pii': { redact: true } },
];

/** What the check registry refuses, named where it sits in the definition. */
const badChecks: Array<[unknown, string, RegExp]> = [
  [{ 'default.nope': {} }, 'guardrail.default.nope', /not a known check/],
  [{ 'default.allUppercase': {} }, 'guardrail.default.allUppercase', /did you mean default\.alluppercase/],
  [{ 'acme.pii': {} }, 'guardrail.acme.pii', /only the built-in checks/],
  [{ 'default.contains': { words: [] } }, 'guardrail.default.contains.words', /words/],
  [
    { 'default.contains': { words: ['x'], operator: 'some' } },
    'guardrail.default.contains.operator',
    /operator/,
  ],
  [{ 'default.contains': { words: ['x'], wrods: 1 } }, 'guardrail.default.contains.wrods', /wrods/],
  [{ 'default.contains': { words: ['x'], not: 'yes' } }, 'guardrail.default.contains.not', /boolean/],
  [{ 'default.wordCount': { minWords: 5, maxWords: 2 } }, 'guardrail.default.wordCount.maxWords', /minWords/],
  [
    { 'default.webhook': { webhookURL: 'ftp://hooks.example/v' } },
    'guardrail.default.webhook.webhookURL',
    /http/,
  ],
  // The engine's own parameters of a check, held to the engine's limits.
  [{ 'default.contains': { words: ['x'], timeout: '5s' } }, 'guardrail.default.contains.timeout', /1 to/],
  [{ 'default.contains': { words: ['x'], timeout: 0 } }, 'guardrail.default.contains.timeout', /1 to/],
  [{ 'default.contains': { words: ['x'], timeout: 300_001 } }, 'guardrail.default.contains.timeout', /1 to/],
  [{ 'default.contains': { words: ['x'], on_error: 'skip' } }, 'guardrail.default.contains.on_error', /pass/],
  // Valid checks before it do not hide the one that is not.
  [
    { 'default.contains': { words: ['x'] }, 'default.regexMatch': { rule: '(' }, deny: true },
    'guardrail.default.regexMatch.rule',
    /rule/,
  ],
];

const bad: Array<[unknown, string]> = [
  [{ 'default.contains': { words: ['x'] }, deny: 'yes' }, 'guardrail.deny'],
  [{ 'default.contains': 'x' }, 'guardrail.default.contains'],
  [{ 'default.contains': {}, on_fail: { feedback: { weight: '1' } } }, 'guardrail.on_fail.feedback.weight'],
  [{ 'default.contains': {}, on_fail: { retry: true } }, 'guardrail.on_fail.retry'],
  [{ deny: true, async: true }, 'guardrail'],
  [{ checks: [{ id: 'default.contains', parameters: {} }] }, 'guardrail.checks'],
  [[{ 'default.contains': {} }], 'guardrail'],
];

function paramOf(run: () => unknown): string | null | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_config');
    return (error as GatewayError).param;
  }
  return undefined;
}

describe('stored guardrail definitions', () => {
  it.each(good)('accepts %j, as the item schema does', (definition) => {
    expect(parseGuardrailDefinition(definition)).toEqual(definition);
  });

  it.each(bad)('refuses %j naming %s', (definition, param) => {
    expect(paramOf(() => parseGuardrailDefinition(definition))).toBe(param);
  });

  it.each(goodChecks)('accepts the checks of %j', (definition) => {
    expect(parseGuardrailDefinition(definition)).toEqual(definition);
  });

  it.each(badChecks)('refuses the checks of %j naming %s', (definition, param, message) => {
    let thrown: unknown;
    try {
      parseGuardrailDefinition(definition);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).code).toBe('invalid_config');
    expect((thrown as GatewayError).param).toBe(param);
    expect((thrown as GatewayError).message).toMatch(message);
  });

  it('refuses, inline in a config, what it refuses as a definition', () => {
    // Inline items are refused later for other reasons until hooks run; the item's own shape comes first.
    const inline = (item: unknown) =>
      paramOf(() => parseConfig({ retry: { attempts: 1 }, output_guardrails: [item] }));
    expect(inline(bad[0][0])).toBe('config.output_guardrails[0].deny');
    expect(inline(bad[2][0])).toBe('config.output_guardrails[0].on_fail.feedback.weight');
  });

  it('is plain JSON Schema that strict tools judge as the gateway does, and the OpenAPI component', () => {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    const check = ajv.compile(JSON.parse(JSON.stringify(GuardrailDefinitionSchema)) as object);
    for (const definition of good) expect(check(definition)).toBe(true);
    // Rules beyond the schema (a check is required, the hook form is named) are the gateway's own.
    for (const [definition, param] of bad.slice(0, 4)) expect(check(definition), param).toBe(false);

    const document = buildOpenApiDocument() as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.components.schemas.Guardrail).toEqual(
      JSON.parse(JSON.stringify(GuardrailDefinitionSchema)),
    );
    expect(Object.keys(document.paths['/v1/guardrails']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/guardrails/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(document.paths['/v1/guardrails/{id}/versions'])).toEqual(['get']);
  });
});
