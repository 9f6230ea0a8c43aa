/**
 * OpenAI's rules for a JSON Schema used in strict mode (Structured Outputs): a strict function tool's
 * parameters and a strict `json_schema` response format, on chat and on the Responses API alike. OpenAI
 * refuses a schema that breaks one with a 400 before any generation, so the gateway refuses it too,
 * whichever target would answer, rather than let a translated provider run it unconstrained.
 *
 * The rules are those of OpenAI's Structured Outputs guide ("Supported schemas"); the wording is the one
 * OpenAI's answers use (`In context=('properties', 'x'), 'oneOf' is not permitted.`, `12 levels of nesting
 * exceeds limit of 10.`). Keywords the guide says nothing of that carry no constraint (`description`,
 * `title`, `default`, `$comment`, …) are let through.
 */

type Schema = Record<string, unknown>;
type Context = ReadonlyArray<string | number>;

/** OpenAI's limits on the size of a strict schema. */
export const STRICT_SCHEMA_LIMITS = {
  /** Object properties in the whole schema. */
  properties: 5000,
  /** Levels of nesting: steps into a property or an array's items, from the root to the deepest schema. */
  nesting: 10,
  /** Characters of every property name, definition name, enum value and const value together. */
  stringLength: 120_000,
  /** Enum values in the whole schema. */
  enumValues: 1000,
  /** An enum of more string values than this… */
  largeEnumValues: 250,
  /** …may hold at most this many characters. */
  largeEnumStringLength: 15_000,
} as const;

/** The string formats strict mode knows. */
const FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

const NUMBER_KEYWORDS = ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'];

/**
 * The keywords strict mode takes on a schema of each type. The guide's lists; `minLength`, `maxLength`
 * and `patternProperties` are among what it says fine-tuned models "additionally" do not support, so the
 * other models do.
 */
const TYPE_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  string: ['pattern', 'format', 'minLength', 'maxLength'],
  number: NUMBER_KEYWORDS,
  integer: NUMBER_KEYWORDS,
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'additionalProperties', 'patternProperties'],
  boolean: [],
  null: [],
};
const TYPED_KEYWORDS = new Set(Object.values(TYPE_KEYWORDS).flat());

/**
 * JSON Schema's other constraining keywords, which strict mode refuses wherever they are: the guide's
 * "not yet supported" composition (`allOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
 * `dependentSchemas`), `oneOf` (only `anyOf` is among its types), and the validation keywords of each
 * type it does not list (OpenAI answers `'uniqueItems' is not permitted.`).
 */
const REFUSED_KEYWORDS = new Set([
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
]);

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where in the schema, as OpenAI words it: a Python tuple of the keys leading there. */
function inContext(context: Context, problem: string): string {
  const keys = context.map((key) => (typeof key === 'number' ? String(key) : `'${key}'`));
  return `In context=(${keys.join(', ')}${keys.length === 1 ? ',' : ''}), ${problem}`;
}

function typesOf(schema: Schema): string[] {
  const { type } = schema;
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
}

function isObjectSchema(schema: Schema): boolean {
  return typesOf(schema).includes('object') || isSchema(schema.properties);
}

/** The schemas directly under `schema`, each with where it is. */
function childrenOf(schema: Schema, context: Context): Array<[unknown, Context]> {
  const children: Array<[unknown, Context]> = [];
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions'] as const) {
    const members = schema[key];
    if (isSchema(members)) {
      for (const [name, member] of Object.entries(members)) children.push([member, [...context, key, name]]);
    }
  }
  if (schema.items !== undefined) children.push([schema.items, [...context, 'items']]);
  if (Array.isArray(schema.anyOf)) {
    schema.anyOf.forEach((member, i) => children.push([member, [...context, 'anyOf', i]]));
  }
  return children;
}

/** What strict mode refuses in this one schema, its members aside. */
function ownProblem(schema: Schema, context: Context): string | undefined {
  // Only a union or a reference takes its type from elsewhere; a bare enum or const does not.
  if (schema.type === undefined && schema.anyOf === undefined && schema.$ref === undefined) {
    return inContext(context, "schema must have a 'type' key.");
  }
  const types = typesOf(schema);
  for (const key of Object.keys(schema)) {
    const refused =
      REFUSED_KEYWORDS.has(key) ||
      (TYPED_KEYWORDS.has(key) && !types.some((type) => TYPE_KEYWORDS[type]?.includes(key)));
    if (refused) return inContext(context, `'${key}' is not permitted.`);
  }
  if (typeof schema.format === 'string' && !FORMATS.has(schema.format)) {
    return inContext(context, `'${schema.format}' is not a valid format.`);
  }
  if (isObjectSchema(schema)) {
    if (schema.additionalProperties !== false) {
      return inContext(context, "'additionalProperties' is required to be supplied and to be false.");
    }
    const keys = isSchema(schema.properties) ? Object.keys(schema.properties) : [];
    const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.find((key) => !required.includes(key));
    if (missing !== undefined) {
      return inContext(
        context,
        "'required' is required to be supplied and to be an array including every key in properties. " +
          `Missing '${missing}'.`,
      );
    }
  }
  return largeEnumProblem(schema, context);
}

/** An enum of many string values is held to a total length. */
function largeEnumProblem(schema: Schema, context: Context): string | undefined {
  const { largeEnumValues, largeEnumStringLength } = STRICT_SCHEMA_LIMITS;
  if (!Array.isArray(schema.enum) || schema.enum.length <= largeEnumValues) return undefined;
  const length = stringLength(schema.enum);
  if (length <= largeEnumStringLength) return undefined;
  return inContext(
    context,
    `enum of ${schema.enum.length} values has a total string length of ${length}, which exceeds the limit ` +
      `of ${largeEnumStringLength} for an enum of more than ${largeEnumValues} values.`,
  );
}

function stringLength(values: readonly unknown[]): number {
  return values.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : 0), 0);
}

/** The first place under `schema` that strict mode refuses, described; undefined when there is none. */
function shapeProblem(schema: unknown, context: Context): string | undefined {
  if (!isSchema(schema)) return undefined;
  const own = ownProblem(schema, context);
  if (own !== undefined) return own;
  for (const [member, at] of childrenOf(schema, context)) {
    const problem = shapeProblem(member, at);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

interface Totals {
  properties: number;
  stringLength: number;
  enumValues: number;
}

/** Adds up, over the schema as written ($defs included once, references not followed), what is limited. */
function addTotals(schema: unknown, totals: Totals): void {
  if (!isSchema(schema)) return;
  if (isSchema(schema.properties)) {
    const names = Object.keys(schema.properties);
    totals.properties += names.length;
    totals.stringLength += stringLength(names);
  }
  for (const key of ['$defs', 'definitions'] as const) {
    if (isSchema(schema[key])) totals.stringLength += stringLength(Object.keys(schema[key]));
  }
  if (Array.isArray(schema.enum)) {
    totals.enumValues += schema.enum.length;
    totals.stringLength += stringLength(schema.enum);
  }
  if (typeof schema.const === 'string') totals.stringLength += schema.const.length;
  for (const [member] of childrenOf(schema, [])) addTotals(member, totals);
}

/** The schema a local reference (`#`, `#/$defs/step`) points to; undefined for any other. */
function resolveReference(root: Schema, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let target: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (!isSchema(target)) return undefined;
    target = target[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return target;
}

/**
 * The levels of nesting below `schema`: steps into a property or an array's items, a reference counted
 * as the schema it names (where it is used), a member of `anyOf` at its union's level. A reference back
 * into itself (a recursive schema, which strict mode takes) adds nothing more.
 */
function nestingBelow(schema: unknown, root: Schema, references: Map<string, number | 'open'>): number {
  if (!isSchema(schema)) return 0;
  let deepest = 0;
  if (typeof schema.$ref === 'string') {
    const known = references.get(schema.$ref);
    if (typeof known === 'number') deepest = known;
    else if (known === undefined) {
      references.set(schema.$ref, 'open');
      const levels = nestingBelow(resolveReference(root, schema.$ref), root, references);
      references.set(schema.$ref, levels);
      deepest = levels;
    }
  }
  for (const key of ['properties', 'patternProperties'] as const) {
    const members = schema[key];
    if (!isSchema(members)) continue;
    for (const member of Object.values(members)) {
      deepest = Math.max(deepest, 1 + nestingBelow(member, root, references));
    }
  }
  if (schema.items !== undefined)
    deepest = Math.max(deepest, 1 + nestingBelow(schema.items, root, references));
  if (Array.isArray(schema.anyOf)) {
    for (const member of schema.anyOf) deepest = Math.max(deepest, nestingBelow(member, root, references));
  }
  return deepest;
}

function sizeProblem(root: Schema): string | undefined {
  const limits = STRICT_SCHEMA_LIMITS;
  const totals: Totals = { properties: 0, stringLength: 0, enumValues: 0 };
  addTotals(root, totals);
  if (totals.properties > limits.properties) {
    return `${totals.properties} parameters exceeds limit of ${limits.properties}.`;
  }
  if (totals.enumValues > limits.enumValues) {
    return `${totals.enumValues} enum values exceeds limit of ${limits.enumValues}.`;
  }
  if (totals.stringLength > limits.stringLength) {
    return (
      `${totals.stringLength} characters of property names, definition names, enum values and const values ` +
      `exceeds limit of ${limits.stringLength}.`
    );
  }
  const levels = nestingBelow(root, root, new Map());
  if (levels > limits.nesting) return `${levels} levels of nesting exceeds limit of ${limits.nesting}.`;
  return undefined;
}

/**
 * Why strict mode cannot take this schema, undefined when it can. Its root must be an object, not a
 * union; `$defs` and references, recursive ones too, are taken.
 */
export function strictSchemaProblem(schema: Schema): string | undefined {
  if (schema.type !== 'object') {
    const type = typeof schema.type === 'string' ? schema.type : 'None';
    return `schema must be a JSON Schema of 'type: "object"', got 'type: "${type}"'.`;
  }
  if (schema.anyOf !== undefined) return inContext([], "the root schema must not be 'anyOf'.");
  return shapeProblem(schema, []) ?? sizeProblem(schema);
}
