/**
 * Finds the one error worth showing a caller for a value that failed a TypeBox schema.
 *
 * The compiled checker only says yes or no, and generic JSON-Schema error lists bury the useful
 * message under "must match anyOf". This walker follows the value through the schema and, at a
 * union, picks the branch the caller evidently meant (by JSON type, then by a discriminating
 * literal such as `role` or `type`, then by whichever branch got furthest), so the message is
 * "messages[1].content[0].type must be one of 'text', 'image_url'" rather than a list of all
 * branches' complaints. It runs only after a check has failed, so it favours clarity over speed.
 */
import { Kind, type TSchema } from '@sinclair/typebox';

export interface SchemaErrorDetail {
  /** Dotted path of the offending field (`messages[0].role`, `config.retry.attempts`). */
  path: string;
  message: string;
  /** Set when the field is a key its closed object does not have: the key and the object's own keys. */
  unknownKey?: { key: string; allowed: readonly string[] };
}

interface Found extends SchemaErrorDetail {
  depth: number;
}

/** Schemas looked up by `$id`, for recursive references (`Kind: 'This'` / `'Ref'`). */
export type SchemaRefs = ReadonlyMap<string, TSchema>;

/**
 * Friendlier messages for failures at a schema's own level. They live under symbol keys so they
 * survive TypeBox's cloning (Optional, Union) yet never appear in the JSON Schema, which strict
 * JSON-Schema tools would reject for an unknown keyword.
 */
const OWN_MESSAGE = Symbol.for('gateway.schema.errorMessage');
const KEY_MESSAGE = Symbol.for('gateway.schema.keyErrorMessage');

/** Sets the message shown when `schema` itself fails (wrong type, pattern, bounds). */
export function withErrorMessage<T extends TSchema>(schema: T, message: string): T {
  return Object.assign(schema, { [OWN_MESSAGE]: message });
}

/** Sets the message shown when a key of the record `schema` does not match its key pattern. */
export function withKeyErrorMessage<T extends TSchema>(schema: T, message: string): T {
  return Object.assign(schema, { [KEY_MESSAGE]: message });
}

function messageOf(schema: TSchema, key: symbol): string | undefined {
  const message = (schema as unknown as Record<symbol, unknown>)[key];
  return typeof message === 'string' ? message : undefined;
}

type Shape = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

export function explainError(
  schema: TSchema,
  value: unknown,
  rootPath: string,
  refs: SchemaRefs = new Map(),
): SchemaErrorDetail | null {
  const found = walk(schema, value, rootPath, 0, refs);
  if (found === null) return null;
  const { depth: _depth, ...detail } = found;
  return detail;
}

function walk(schema: TSchema, value: unknown, path: string, depth: number, refs: SchemaRefs): Found | null {
  const s = resolve(schema, refs);
  switch (s[Kind]) {
    case 'Any':
    case 'Unknown':
      return null;
    case 'Null':
      return value === null ? null : fail(s, path, depth, 'must be null');
    case 'Boolean':
      return typeof value === 'boolean' ? null : fail(s, path, depth, 'must be a boolean');
    case 'Literal':
      return value === s.const ? null : fail(s, path, depth, `must be ${quote(s.const)}`);
    case 'String':
      return checkString(s, value, path, depth);
    case 'Number':
    case 'Integer':
      return checkNumber(s, value, path, depth);
    case 'Array':
      return checkArray(s, value, path, depth, refs);
    case 'Object':
      return checkObject(s, value, path, depth, refs);
    case 'Record':
      return checkRecord(s, value, path, depth, refs);
    case 'Union':
      return checkUnion(s, value, path, depth, refs);
    default:
      throw new Error(`explainError: unsupported schema kind ${String(s[Kind])}`);
  }
}

function checkString(s: TSchema, value: unknown, path: string, depth: number): Found | null {
  if (typeof value !== 'string') return fail(s, path, depth, 'must be a string');
  if (typeof s.minLength === 'number' && value.length < s.minLength) {
    return fail(
      s,
      path,
      depth,
      s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`,
    );
  }
  if (typeof s.maxLength === 'number' && value.length > s.maxLength) {
    return fail(s, path, depth, `must be at most ${s.maxLength} characters`);
  }
  if (typeof s.pattern === 'string' && !new RegExp(s.pattern).test(value)) {
    return fail(s, path, depth, `must match the pattern ${s.pattern}`);
  }
  return null;
}

function checkNumber(s: TSchema, value: unknown, path: string, depth: number): Found | null {
  const integer = s[Kind] === 'Integer';
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return fail(s, path, depth, integer ? 'must be an integer' : 'must be a number');
  }
  if (integer && !Number.isInteger(value)) return fail(s, path, depth, 'must be an integer');
  if (typeof s.minimum === 'number' && value < s.minimum) {
    return fail(s, path, depth, `must be at least ${formatBound(s.minimum)}`);
  }
  if (typeof s.maximum === 'number' && value > s.maximum) {
    return fail(s, path, depth, `must be at most ${formatBound(s.maximum)}`);
  }
  if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) {
    return fail(s, path, depth, `must be greater than ${formatBound(s.exclusiveMinimum)}`);
  }
  if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) {
    return fail(s, path, depth, `must be less than ${formatBound(s.exclusiveMaximum)}`);
  }
  return null;
}

function checkArray(s: TSchema, value: unknown, path: string, depth: number, refs: SchemaRefs): Found | null {
  if (!Array.isArray(value)) return fail(s, path, depth, 'must be an array');
  if (typeof s.minItems === 'number' && value.length < s.minItems) {
    return fail(s, path, depth, `must have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`);
  }
  if (typeof s.maxItems === 'number' && value.length > s.maxItems) {
    return fail(s, path, depth, `must have at most ${s.maxItems} item${s.maxItems === 1 ? '' : 's'}`);
  }
  for (let i = 0; i < value.length; i++) {
    const found = walk(s.items as TSchema, value[i], `${path}[${i}]`, depth + 1, refs);
    if (found !== null) return found;
  }
  return null;
}

function checkObject(
  s: TSchema,
  value: unknown,
  path: string,
  depth: number,
  refs: SchemaRefs,
): Found | null {
  if (shapeOf(value) !== 'object') return fail(s, path, depth, 'must be an object');
  const record = value as Record<string, unknown>;
  const counted = checkKeyCount(s, record, path, depth);
  if (counted !== null) return counted;
  const properties = (s.properties ?? {}) as Record<string, TSchema>;
  // An unknown key first: in a closed object it is usually a misspelling of the "missing" one.
  if (s.additionalProperties === false) {
    const unknown = Object.keys(record).find((key) => properties[key] === undefined);
    if (unknown !== undefined) {
      const allowed = Object.keys(properties);
      return {
        ...at(join(path, unknown), depth + 1, unknownKeyMessage(allowed)),
        unknownKey: { key: unknown, allowed },
      };
    }
  }
  // A wrong `type`/`role` literal says the caller meant another kind of object altogether, which
  // explains the missing fields better than the missing fields do.
  for (const [key, property] of Object.entries(properties)) {
    if (property[Kind] === 'Literal' && record[key] !== undefined && record[key] !== property.const) {
      return walk(property, record[key], join(path, key), depth + 1, refs);
    }
  }
  for (const key of (s.required ?? []) as string[]) {
    if (record[key] === undefined) return at(join(path, key), depth + 1, 'is required');
  }
  for (const key of Object.keys(record)) {
    const known =
      properties[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (known === undefined) continue;
    const found = walk(known as TSchema, record[key], join(path, key), depth + 1, refs);
    if (found !== null) return found;
  }
  return null;
}

function checkRecord(
  s: TSchema,
  value: unknown,
  path: string,
  depth: number,
  refs: SchemaRefs,
): Found | null {
  if (shapeOf(value) !== 'object') return fail(s, path, depth, 'must be an object');
  const counted = checkKeyCount(s, value as Record<string, unknown>, path, depth);
  if (counted !== null) return counted;
  const [pattern, valueSchema] = Object.entries(s.patternProperties as Record<string, TSchema>)[0]!;
  const keyPattern = new RegExp(pattern);
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const child = join(path, key);
    if (!keyPattern.test(key)) {
      return at(
        child,
        depth + 1,
        messageOf(s, KEY_MESSAGE) ?? `is not a valid key: keys must match ${pattern}`,
      );
    }
    const found = walk(valueSchema, item, child, depth + 1, refs);
    if (found !== null) return found;
  }
  return null;
}

/** `minProperties` / `maxProperties` (metadata's 16 pairs): said with the limit, not left to the compiled
 * checker, whose message under a union is only "Expected union value". */
function checkKeyCount(
  s: TSchema,
  record: Record<string, unknown>,
  path: string,
  depth: number,
): Found | null {
  const count = Object.keys(record).length;
  if (typeof s.maxProperties === 'number' && count > s.maxProperties) {
    return fail(s, path, depth, `has ${count} keys: at most ${s.maxProperties} are allowed`);
  }
  if (typeof s.minProperties === 'number' && count < s.minProperties) {
    return fail(s, path, depth, `has ${count} keys: at least ${s.minProperties} are needed`);
  }
  return null;
}

function checkUnion(s: TSchema, value: unknown, path: string, depth: number, refs: SchemaRefs): Found | null {
  const branches = (s.anyOf as TSchema[]).map((b) => resolve(b, refs));
  const shape = shapeOf(value);
  let candidates = branches.filter((b) => accepts(b, shape));
  if (candidates.length === 0) return fail(s, path, depth, `must be ${describeAll(branches)}`);

  if (shape === 'string' && candidates.every((b) => b[Kind] === 'Literal')) {
    if (candidates.some((b) => b.const === value)) return null;
    return fail(s, path, depth, `must be ${describeAll(candidates)}`);
  }
  if (shape === 'object' && candidates.length > 1) {
    const picked = pickByDiscriminator(candidates, value as Record<string, unknown>, path, depth);
    if ('error' in picked) return picked.error;
    candidates = picked.candidates;
  }
  if (shape === 'array' && candidates.length > 1 && (value as unknown[]).length > 0) {
    const firstShape = shapeOf((value as unknown[])[0]);
    const byFirst = candidates.filter(
      (b) => b[Kind] !== 'Array' || accepts(resolve(b.items, refs), firstShape),
    );
    if (byFirst.length === 0) {
      const items = candidates.map((b) => resolve(b.items as TSchema, refs));
      return at(`${path}[0]`, depth + 1, `must be ${describeAll(items)}`);
    }
    candidates = byFirst;
  }

  let best: Found | null = null;
  for (const branch of candidates) {
    const found = walk(branch, value, path, depth, refs);
    if (found === null) return null;
    if (best === null || found.depth > best.depth) best = found;
  }
  return best;
}

/**
 * Among object branches, a key that is a literal in every branch (`role`, `type`) tells which one
 * the caller meant; an unknown value is the error worth reporting, and so is its absence unless
 * some branches may go without it.
 */
function pickByDiscriminator(
  candidates: TSchema[],
  value: Record<string, unknown>,
  path: string,
  depth: number,
): { candidates: TSchema[] } | { error: Found } {
  const objects = candidates.filter((b) => b[Kind] === 'Object');
  if (objects.length !== candidates.length) return { candidates };
  const first = objects[0]!.properties as Record<string, TSchema>;
  const key = Object.keys(first).find((k) =>
    objects.every((b) => literalsOf((b.properties as Record<string, TSchema>)[k]) !== null),
  );
  if (key === undefined) return { candidates };
  const actual = value[key];
  if (actual === undefined) {
    // A key some branches leave optional (a Responses message's `type`) picks those branches, unless
    // the value has a key only the others know (a function_call_output's `call_id`).
    const optional = objects.filter((b) => !((b.required ?? []) as string[]).includes(key));
    const knows = (branches: TSchema[], k: string) => branches.some((b) => k in b.properties);
    const meantAnother = Object.keys(value).some((k) => !knows(optional, k) && knows(objects, k));
    if (optional.length > 0 && !meantAnother) return { candidates: optional };
    return { error: at(join(path, key), depth + 1, 'is required') };
  }
  const matching = objects.filter((b) => literalsOf(b.properties[key])!.includes(actual));
  if (matching.length > 0) return { candidates: matching };
  const allowed = [...new Set(objects.flatMap((b) => literalsOf(b.properties[key])!))];
  return { error: at(join(path, key), depth + 1, `must be ${describeLiterals(allowed)}`) };
}

function literalsOf(schema: TSchema | undefined): unknown[] | null {
  if (schema === undefined) return null;
  if (schema[Kind] === 'Literal') return [schema.const];
  if (schema[Kind] === 'Union' && (schema.anyOf as TSchema[]).every((b) => b[Kind] === 'Literal')) {
    return (schema.anyOf as TSchema[]).map((b) => b.const);
  }
  return null;
}

function accepts(schema: TSchema, shape: Shape): boolean {
  switch (schema[Kind]) {
    case 'Any':
    case 'Unknown':
      return true;
    case 'Null':
      return shape === 'null';
    case 'Boolean':
      return shape === 'boolean';
    case 'String':
      return shape === 'string';
    case 'Number':
    case 'Integer':
      return shape === 'number';
    case 'Literal':
      return shapeOf(schema.const) === shape;
    case 'Array':
      return shape === 'array';
    case 'Object':
    case 'Record':
    case 'This':
    case 'Ref':
      return shape === 'object';
    case 'Union':
      return (schema.anyOf as TSchema[]).some((b) => accepts(b, shape));
    default:
      return false;
  }
}

function describeAll(branches: TSchema[]): string {
  const literals = branches.filter((b) => b[Kind] === 'Literal').map((b) => b.const);
  const others = [...new Set(branches.filter((b) => b[Kind] !== 'Literal').map(describe))];
  const parts = literals.length > 0 ? [describeLiterals(literals), ...others] : others;
  return parts.length <= 1 ? (parts[0] ?? 'valid') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

function describe(schema: TSchema): string {
  switch (schema[Kind]) {
    case 'Null':
      return 'null';
    case 'Boolean':
      return 'a boolean';
    case 'String':
      return 'a string';
    case 'Number':
      return 'a number';
    case 'Integer':
      return 'an integer';
    case 'Array':
      return 'an array';
    case 'Union':
      return describeAll(schema.anyOf as TSchema[]);
    default:
      return 'an object';
  }
}

function describeLiterals(values: unknown[]): string {
  return values.length === 1 ? quote(values[0]) : `one of ${values.map(quote).join(', ')}`;
}

function resolve(schema: TSchema, refs: SchemaRefs): TSchema {
  if ((schema[Kind] === 'This' || schema[Kind] === 'Ref') && typeof schema.$ref === 'string') {
    const target = refs.get(schema.$ref);
    if (target === undefined) throw new Error(`explainError: unknown $ref ${schema.$ref}`);
    return target;
  }
  return schema;
}

export function shapeOf(value: unknown): Shape {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  if (t === 'boolean' || t === 'number' || t === 'string') return t;
  return 'object';
}

/** What an unknown key is told: our spelling of it where one is known (`spelling`), and the keys allowed. */
export function unknownKeyMessage(allowed: readonly string[], spelling?: string): string {
  const list = allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : '';
  return `is not a known key${spelling === undefined ? '' : `: write ${spelling}`}${list}`;
}

function fail(schema: TSchema, path: string, depth: number, message: string): Found {
  return at(path, depth, messageOf(schema, OWN_MESSAGE) ?? message);
}

function at(path: string, depth: number, message: string): Found {
  return { path, depth, message };
}

export function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** ±9223372036854775807 prints as 9223372036854776000 otherwise. */
function formatBound(n: number): string {
  return Math.abs(n) >= 2 ** 63 ? `${n < 0 ? '-' : ''}9223372036854775807` : String(n);
}
