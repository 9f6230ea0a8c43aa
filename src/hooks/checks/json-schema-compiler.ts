/**
 * Compiles the JSON Schemas of `default.jsonSchema` with Ajv: draft 2020-12 by default, draft-07 when the
 * schema's `$schema` says so or only draft-07 can read it; unknown keywords refused (a misspelt `requried` would otherwise check
 * nothing); standard formats (`email`, `date-time` …) from ajv-formats; `pattern` keywords on the
 * linear-time engine, since schemas come from configs.
 *
 * Compiled validators are kept per distinct schema in a bounded cache; when one leaves it, Ajv's own
 * cache of it is dropped too, so a stream of distinct inline schemas cannot grow memory without bound.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { compileLinearRegex } from '../linear-regex.js';

// ajv-formats ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin;

const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const regex = compileLinearRegex(pattern);
    // Ajv shares compiled patterns by their toString(): it must tell patterns apart.
    return { test: (text: string) => regex.test(text), toString: () => `/${pattern}/` };
  },
  { code: 'linearRegExp' },
);

const options = {
  allErrors: false,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  logger: false as const,
  code: { regExp: linearRegExp },
};

function withFormats<T extends Ajv>(ajv: T): T {
  addFormats(ajv, { mode: 'fast' });
  return ajv;
}

const draft2020 = withFormats(new Ajv2020(options));
const draft07 = withFormats(new Ajv(options));

interface Compiled {
  ajv: Ajv;
  schema: object;
  validate: ValidateFunction;
}

const cache = new LRUCache<string, Compiled>({
  max: 500,
  dispose: (entry) => entry.ajv.removeSchema(entry.schema),
});

/**
 * The schema's validator; throws an Error saying why when the schema is not a usable JSON Schema. A schema
 * without `$schema` is read as draft 2020-12, or as draft-07 when 2020-12 refuses it and draft-07 does not:
 * Portkey's check reads such schemas as draft-07 (Ajv's default), so one written for it (tuple `items`,
 * `additionalItems`, `dependencies`) works as it did there.
 */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached.validate;
  const declared = schema.$schema;
  if (typeof declared === 'string') {
    return compileWith(/draft-0[67]/.test(declared) ? draft07 : draft2020, schema, key);
  }
  try {
    return compileWith(draft2020, schema, key);
  } catch (error) {
    try {
      return compileWith(draft07, schema, key);
    } catch {
      throw error;
    }
  }
}

function compileWith(ajv: Ajv, schema: Record<string, unknown>, key: string): ValidateFunction {
  // Compiling a copy keeps Ajv's cache keyed by an object only this module holds.
  const own = structuredClone(schema);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(own);
  } catch (error) {
    ajv.removeSchema(own);
    throw error;
  }
  cache.set(key, { ajv, schema: own, validate });
  return validate;
}

/** "/items/0/name must be string": the first error, pointing into the checked JSON. */
export function describeSchemaError(error: ErrorObject): { path: string; message: string } {
  return {
    path: error.instancePath === '' ? '/' : error.instancePath,
    message: error.message ?? 'is invalid',
  };
}
