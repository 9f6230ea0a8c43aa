/**
 * Junk of every JSON type at every key of valid bodies and configs: the validators must answer with
 * a GatewayError (or accept), never with any other exception.
 */
import { describe, expect, it } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../../src/core/errors.js';
import { GatewayConfigSchema, parseConfig } from '../../src/gateway/config/index.js';
import { explainError } from '../../src/core/validator/explain-error.js';
import {
  ChatCompletionRequestSchema,
  CompletionRequestSchema,
  EmbeddingRequestSchema,
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
} from '../../src/core/schemas/index.js';
import {
  goodCompletionBodies,
  goodEmbeddingBodies,
  richChatBody,
  richConfig,
  routableRichConfig,
} from './good-bodies.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

const JUNK: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e300,
  -1e300,
  '',
  'x',
  '@',
  [],
  [null],
  [1, 'a'],
  {},
  { a: {} },
];

/** Every path to a value inside `value`, object keys and array items alike. */
function paths(value: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => out.push([...prefix, i], ...paths(item, [...prefix, i])));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value))
      out.push([...prefix, key], ...paths(item, [...prefix, key]));
  }
  return out;
}

function setAt(root: Json, path: Path, replacement: Json): Json {
  const copy = structuredClone(root);
  let node = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[path.at(-1)!] = replacement;
  return copy;
}

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomJson(next: () => number, depth: number): Json {
  const pick = Math.floor(next() * (depth > 0 ? 8 : 6));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return Math.floor((next() - 0.5) * 2 ** (next() * 70));
    case 3:
      return (next() - 0.5) * 10;
    case 4:
      return ['', 'user', 'function', 'text', 'json_schema', 'enabled', 'fallback', 'simple', '@x'][
        Math.floor(next() * 9)
      ]!;
    case 5:
      return String.fromCharCode(
        ...Array.from({ length: Math.floor(next() * 5) }, () => 32 + Math.floor(next() * 90)),
      );
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth - 1));
    default: {
      const keys = ['type', 'role', 'content', 'name', 'mode', 'targets', 'function', 'id', 'x'];
      const obj: Record<string, Json> = {};
      for (let i = Math.floor(next() * 4); i > 0; i--)
        obj[keys[Math.floor(next() * keys.length)]!] = randomJson(next, depth - 1);
      return obj;
    }
  }
}

function expectOnlyGatewayErrors(validate: (value: unknown) => unknown, value: unknown, label: string): void {
  try {
    validate(value);
  } catch (error) {
    if (!(error instanceof GatewayError)) {
      throw new Error(`${label}: threw ${String(error)} for ${JSON.stringify(value)}`, { cause: error });
    }
    expect(error.status).toBe(400);
    expect(error.message.length).toBeGreaterThan(0);
  }
}

const subjects: [string, (value: unknown) => unknown, Json][] = [
  ['chat', validateChatCompletionRequest, richChatBody as unknown as Json],
  ['completions', validateCompletionRequest, goodCompletionBodies[1] as Json],
  ['completions tokens', validateCompletionRequest, goodCompletionBodies[3] as Json],
  ['embeddings', validateEmbeddingRequest, goodEmbeddingBodies[1] as Json],
  ['config', (v) => parseConfig(v), routableRichConfig as unknown as Json],
];

describe.each(subjects)('%s validator under junk', (label, validate, good) => {
  it('the base value is valid', () => {
    expect(() => validate(structuredClone(good))).not.toThrow();
  });

  it('answers junk of every type at every key with a GatewayError or acceptance', () => {
    let rejected = 0;
    for (const path of paths(good)) {
      for (const junk of JUNK) {
        const value = setAt(good, path, junk);
        try {
          validate(value);
        } catch (error) {
          if (!(error instanceof GatewayError)) {
            throw new Error(`${label} ${path.join('.')}=${JSON.stringify(junk)}: ${String(error)}`, {
              cause: error,
            });
          }
          rejected++;
        }
      }
    }
    // Most junk is wrong somewhere; a validator that accepted everything would fail here.
    expect(rejected).toBeGreaterThan(paths(good).length * 3);
  });

  it('answers random structures at random keys with a GatewayError or acceptance', () => {
    const next = random(label.length * 7919);
    const all = paths(good);
    for (let i = 0; i < 2000; i++) {
      const path = all[Math.floor(next() * all.length)]!;
      expectOnlyGatewayErrors(validate, setAt(good, path, randomJson(next, 3)), label);
    }
    for (let i = 0; i < 300; i++) expectOnlyGatewayErrors(validate, randomJson(next, 4), label);
  });
});

/**
 * The error walker must agree with the compiled check on every value: if it ever found nothing
 * where the check failed, the caller would get the compiled checker's vaguer message instead.
 */
describe.each([
  ['chat', ChatCompletionRequestSchema, richChatBody as unknown as Json],
  ['completions', CompletionRequestSchema, goodCompletionBodies[1] as Json],
  ['embeddings', EmbeddingRequestSchema, goodEmbeddingBodies[1] as Json],
  ['config', GatewayConfigSchema, richConfig as unknown as Json],
] as const)('%s error walker agrees with the compiled check', (label, schema, good) => {
  it('on junk at every key and on random structures', () => {
    const compiled = TypeCompiler.Compile(schema);
    const refs = new Map<string, TSchema>([[schema.$id!, schema]]);
    const next = random(label.length * 104729);
    const all = paths(good);
    const values: Json[] = [good];
    for (const path of all) for (const junk of JUNK) values.push(setAt(good, path, junk));
    for (let i = 0; i < 2000; i++)
      values.push(setAt(good, all[Math.floor(next() * all.length)]!, randomJson(next, 3)));
    let disagreements = 0;
    for (const value of values) {
      const valid = compiled.Check(value);
      const explained = explainError(schema, value, '', refs);
      if (valid !== (explained === null)) {
        disagreements++;
        console.error(label, JSON.stringify(value).slice(0, 300), valid, explained);
      }
    }
    expect(disagreements).toBe(0);
  });
});
