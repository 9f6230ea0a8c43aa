import type { GeminiSchema } from './google-api-types.js';

type JsonSchema = Record<string, unknown>;

/** String formats Gemini accepts per type; any other `format` is dropped. */
const ALLOWED_FORMATS: Record<string, readonly string[]> = {
  STRING: ['enum', 'date-time'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};

const TYPE_NAMES: Record<string, NonNullable<GeminiSchema['type']>> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
  null: 'NULL',
};

/** Deeper than this, a recursive `$ref` is cut off (Gemini's schema has no references). */
const MAX_REF_DEPTH = 8;

/**
 * Converts a JSON Schema (what OpenAI clients send in `tools[].function.parameters` and
 * `response_format.json_schema.schema`) into the OpenAPI 3.0 subset of Gemini's `Schema`.
 *
 * Kept: type (a `[T, "null"]` pair becomes `nullable`), description, title, enum (as strings), const (a string one as a
 * one-value enum), properties, required, items, anyOf (oneOf becomes anyOf), min/max items, length,
 * properties, minimum, maximum, pattern, default, and the formats Gemini knows. `$ref` into `$defs` /
 * `definitions` is inlined; `allOf` is merged. Dropped because Gemini refuses them: `additionalProperties`,
 * `$schema`, `$id`, `$comment`, `examples`, `not`, `if`/`then`/`else`, `patternProperties`, `prefixItems`,
 * `uniqueItems`, `multipleOf`, `exclusiveMinimum`/`exclusiveMaximum`, `dependent*`, unknown formats.
 *
 * Returns undefined for a schema that says nothing (no type, an object without properties at the root),
 * which Gemini wants left out rather than sent empty.
 */
export function convertJsonSchemaToGoogleSchema(schema: unknown): GeminiSchema | undefined {
  if (!isObject(schema)) return undefined;
  if (isEmptyObjectSchema(schema)) return undefined;
  return convert(schema, schema, 0);
}

function convert(node: JsonSchema, root: JsonSchema, depth: number): GeminiSchema {
  const resolved = resolveRefs(node, root, depth);
  if (resolved === undefined) return {};
  const out: GeminiSchema = {};

  let typeName: string | undefined;
  const rawType = resolved.type;
  if (typeof rawType === 'string') typeName = rawType;
  else if (Array.isArray(rawType)) {
    const types = rawType.filter((t): t is string => typeof t === 'string');
    const nonNull = types.filter((t) => t !== 'null');
    if (types.includes('null')) out.nullable = true;
    if (nonNull.length === 1) typeName = nonNull[0];
    else if (nonNull.length > 1) {
      out.anyOf = nonNull.map((t) => convert({ ...resolved, type: t }, root, depth + 1));
    }
  }
  if (typeName === undefined && resolved.const !== undefined) typeName = jsonTypeOf(resolved.const);
  if (typeName === undefined && Array.isArray(resolved.enum)) typeName = enumType(resolved.enum);
  if (typeName === undefined && isObject(resolved.properties)) typeName = 'object';
  if (typeName !== undefined && TYPE_NAMES[typeName]) out.type = TYPE_NAMES[typeName];

  if (typeof resolved.title === 'string') out.title = resolved.title;
  if (typeof resolved.description === 'string') out.description = resolved.description;
  if (resolved.nullable === true) out.nullable = true;
  if (resolved.default !== undefined) out.default = resolved.default;

  if (
    typeof resolved.format === 'string' &&
    out.type &&
    ALLOWED_FORMATS[out.type]?.includes(resolved.format)
  ) {
    out.format = resolved.format;
  }
  // Gemini's enum is string-only; other enums are described instead of enforced.
  if (typeof resolved.const === 'string') {
    out.enum = [resolved.const];
    out.type = 'STRING';
  } else if (Array.isArray(resolved.enum)) {
    const values = resolved.enum.filter((v) => v !== null);
    if (values.every((v) => typeof v === 'string')) {
      out.enum = values as string[];
      out.type = 'STRING';
      if (resolved.enum.includes(null)) out.nullable = true;
    }
  }

  // Google takes properties on an OBJECT only, and never empty ones: an object without named properties
  // goes as a bare OBJECT, and properties written on another type (as some tool schemas do) are left out.
  const properties = isObject(resolved.properties) ? Object.entries(resolved.properties) : [];
  if (properties.length > 0 && (out.type === 'OBJECT' || out.type === undefined)) {
    out.properties = {};
    for (const [name, child] of properties) {
      out.properties[name] = isObject(child) ? convert(child, root, depth + 1) : {};
    }
    if (Array.isArray(resolved.required) && resolved.required.length > 0) {
      out.required = resolved.required.filter((r): r is string => typeof r === 'string');
    }
  }
  if (isObject(resolved.items)) out.items = convert(resolved.items, root, depth + 1);
  // Google refuses an ARRAY whose items have no type ("items: missing field"), which JSON Schema allows: such
  // items are described as strings, the commonest case, rather than the tool or schema being refused.
  if (
    out.type === 'ARRAY' &&
    (out.items === undefined || (out.items.type === undefined && !out.items.anyOf))
  ) {
    out.items = { ...out.items, type: 'STRING' };
  }

  const union = Array.isArray(resolved.anyOf)
    ? resolved.anyOf
    : Array.isArray(resolved.oneOf)
      ? resolved.oneOf
      : undefined;
  if (union) {
    const branches = union.filter(isObject);
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length < branches.length) out.nullable = true;
    if (nonNull.length === 1)
      Object.assign(out, convert(nonNull[0], root, depth + 1), out.nullable ? { nullable: true } : {});
    else if (nonNull.length > 1) out.anyOf = nonNull.map((b) => convert(b, root, depth + 1));
  }

  for (const key of [
    'minItems',
    'maxItems',
    'minLength',
    'maxLength',
    'minProperties',
    'maxProperties',
  ] as const) {
    if (typeof resolved[key] === 'number') (out as Record<string, unknown>)[key] = String(resolved[key]);
  }
  if (typeof resolved.minimum === 'number') out.minimum = resolved.minimum;
  if (typeof resolved.maximum === 'number') out.maximum = resolved.maximum;
  if (typeof resolved.pattern === 'string') out.pattern = resolved.pattern;
  return out;
}

/** Inlines `$ref` and merges `allOf`, so the rest of the conversion sees one plain schema. */
function resolveRefs(node: JsonSchema, root: JsonSchema, depth: number): JsonSchema | undefined {
  let current = node;
  if (typeof current.$ref === 'string') {
    if (depth > MAX_REF_DEPTH) return undefined;
    const target = lookupRef(current.$ref, root);
    if (!target) return undefined;
    const { $ref: _ref, ...rest } = current;
    current = { ...target, ...rest };
    return resolveRefs(current, root, depth + 1);
  }
  if (Array.isArray(current.allOf)) {
    const { allOf, ...rest } = current;
    let merged: JsonSchema = {};
    for (const part of allOf) {
      if (!isObject(part)) continue;
      const piece = resolveRefs(part, root, depth + 1) ?? {};
      merged = {
        ...merged,
        ...piece,
        properties: { ...asObject(merged.properties), ...asObject(piece.properties) },
        required: [...asArray(merged.required), ...asArray(piece.required)],
      };
    }
    current = {
      ...merged,
      ...rest,
      properties: { ...asObject(merged.properties), ...asObject(rest.properties) },
      required: [...asArray(merged.required), ...asArray(rest.required)],
    };
    if (Object.keys(current.properties as object).length === 0) delete current.properties;
  }
  return current;
}

function lookupRef(ref: string, root: JsonSchema): JsonSchema | undefined {
  if (!ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return isObject(node) ? node : undefined;
}

function isEmptyObjectSchema(schema: JsonSchema): boolean {
  if (schema.type !== 'object') return false;
  const noProperties = !isObject(schema.properties) || Object.keys(schema.properties).length === 0;
  return (
    noProperties && schema.anyOf === undefined && schema.oneOf === undefined && schema.allOf === undefined
  );
}

/**
 * The type an enum's values share (`[1, 2]` integer, `[0.5, 1]` number, `[true, false]` boolean; null is left
 * aside); string for strings or for values of several types, as the enum is only described then.
 */
function enumType(values: unknown[]): string {
  const types = new Set(values.filter((v) => v !== null).map(jsonTypeOf));
  if (types.size === 2 && types.has('integer') && types.has('number')) return 'number';
  const [only] = types;
  return types.size === 1 && only !== undefined ? only : 'string';
}

function jsonTypeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'boolean') return 'boolean';
  return undefined;
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): JsonSchema {
  return isObject(value) ? value : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
