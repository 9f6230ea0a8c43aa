// Validates values against component schemas of the OpenAI OpenAPI document, the authority for the
// shapes the gateway speaks to clients. The document mixes OpenAPI 3.0 habits (`nullable`, boolean
// `exclusiveMinimum`) into a 3.1 file, so it is normalised to plain JSON Schema 2020-12 before Ajv sees it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

// ajv-formats ships CommonJS with `exports.default`; under NodeNext the default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as FormatsPlugin;

const DOCUMENT_ID = 'https://openapi.local/openai.json';

export interface OpenAPIValidation {
  valid: boolean;
  errors: string;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the OpenAI document lives: `SHARED_DIR` wins, else the `shared/` folder beside the repository. */
export function openAPIDocumentPath(): string {
  const sharedDir = process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
  return path.join(sharedDir, 'reference', 'openai-openapi.yaml');
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

export function validateAgainstOpenAPI(schemaName: string, value: unknown): OpenAPIValidation {
  const validate = validatorFor(schemaName);
  if (validate(value)) return { valid: true, errors: '' };
  return { valid: false, errors: formatErrors(validate.errors ?? []) };
}

/** Throws with every violation listed, so a failing test says which field is wrong and why. */
export function expectOpenAPIValid(schemaName: string, value: unknown): void {
  const result = validateAgainstOpenAPI(schemaName, value);
  if (!result.valid) {
    const shown = JSON.stringify(value, null, 2);
    throw new Error(
      `value does not match OpenAPI schema ${schemaName}:\n${result.errors}\nvalue: ${shown.length > 2000 ? shown.slice(0, 2000) + '…' : shown}`,
    );
  }
}

/**
 * As `expectOpenAPIValid`, with the top-level properties `nullFields` of the schema taking `null` besides
 * what the document says, and no other: for the fields the real API sends as `null` where the document
 * declares a type without it (a Batch's unset `*_at`, a File's `status_details`), which the SDKs accept.
 */
export function expectOpenAPIValidAllowingNull(
  schemaName: string,
  value: unknown,
  nullFields: readonly string[],
): void {
  const key = `${schemaName}|${[...nullFields].sort().join(',')}`;
  let validate = validators.get(key);
  if (!validate) {
    const instance = getAjv();
    const schemas = (instance.getSchema(DOCUMENT_ID)?.schema as JsonObject).components as {
      schemas: JsonObject;
    };
    const schema = structuredClone(schemas.schemas[schemaName]) as JsonObject | undefined;
    const properties = schema?.properties as JsonObject | undefined;
    if (!schema || !properties) throw new Error(`OpenAPI schema ${schemaName} has no properties`);
    for (const field of nullFields) {
      if (!(field in properties)) throw new Error(`OpenAPI schema ${schemaName} has no property ${field}`);
      properties[field] = { anyOf: [properties[field], { type: 'null' }] };
    }
    // The copy's references name the document's schemas, as the original's did inside it.
    const relocated = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`),
    ) as JsonObject;
    validate = instance.compile(relocated);
    validators.set(key, validate);
  }
  if (!validate(value)) {
    const shown = JSON.stringify(value, null, 2);
    throw new Error(
      `value does not match OpenAPI schema ${schemaName} (null allowed in ${nullFields.join(', ')}):\n` +
        `${formatErrors(validate.errors ?? [])}\nvalue: ${shown.length > 2000 ? shown.slice(0, 2000) + '…' : shown}`,
    );
  }
}

function validatorFor(schemaName: string): ValidateFunction {
  const cached = validators.get(schemaName);
  if (cached) return cached;
  const instance = getAjv();
  const schemas = (instance.getSchema(DOCUMENT_ID)?.schema as JsonObject | undefined)?.components as
    { schemas: JsonObject } | undefined;
  if (!schemas || !(schemaName in schemas.schemas)) {
    throw new Error(`OpenAPI document has no component schema named ${schemaName}`);
  }
  const validate = instance.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schemaName}` });
  validators.set(schemaName, validate);
  return validate;
}

function getAjv(): Ajv2020 {
  if (ajv) return ajv;
  const instance = new Ajv2020({
    strict: false, // the document carries x-oaiMeta, example, discriminator and friends
    allErrors: true,
    validateSchema: false,
    allowUnionTypes: true,
  });
  addFormats(instance);
  // Formats the document uses that are descriptive rather than checkable.
  instance.addFormat('unixtime', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  instance.addFormat('float', { type: 'number', validate: () => true });
  instance.addFormat('double', { type: 'number', validate: () => true });
  instance.addSchema({ $id: DOCUMENT_ID, components: loadComponents() });
  ajv = instance;
  return instance;
}

function loadComponents(): JsonObject {
  const docPath = openAPIDocumentPath();
  if (!existsSync(docPath)) {
    throw new Error(
      `OpenAI OpenAPI document not found at ${docPath} (set SHARED_DIR to the folder holding reference/)`,
    );
  }
  // Parsing the 3 MB YAML takes about a second; each test worker would pay it, so keep a JSON copy.
  const stat = statSync(docPath);
  const key = createHash('sha1')
    .update(`${docPath}:${stat.size}:${stat.mtimeMs}:v1`)
    .digest('hex')
    .slice(0, 16);
  const cacheDir = path.join(tmpdir(), 'openapi-schema-cache');
  const cacheFile = path.join(cacheDir, `${key}.json`);
  if (existsSync(cacheFile)) {
    try {
      return JSON.parse(readFileSync(cacheFile, 'utf8')) as JsonObject;
    } catch {
      // a half-written cache from a concurrent worker: fall through and rebuild it
    }
  }
  const doc = parseYaml(readFileSync(docPath, 'utf8'), { maxAliasCount: -1 }) as JsonObject;
  const components = normalise({ schemas: (doc.components as JsonObject).schemas }) as JsonObject;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(components));
    // rename is atomic, so another worker never reads a partial file
    renameSync(tmp, cacheFile);
  } catch {
    // caching is an optimisation only
  }
  return components;
}

/** Rewrites OpenAPI 3.0 idioms into JSON Schema 2020-12 so Ajv enforces what the document means. */
function normalise(node: Json): Json {
  if (Array.isArray(node)) return node.map(normalise);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    // Example payloads and vendor metadata are not schemas; dropping them keeps Ajv from walking them.
    if (key === 'x-oaiMeta' || key === 'example' || key === 'examples') continue;
    out[key] = normalise(value);
  }
  if (typeof out.exclusiveMinimum === 'boolean') {
    if (out.exclusiveMinimum && typeof out.minimum === 'number') {
      out.exclusiveMinimum = out.minimum;
      delete out.minimum;
    } else delete out.exclusiveMinimum;
  }
  if (typeof out.exclusiveMaximum === 'boolean') {
    if (out.exclusiveMaximum && typeof out.maximum === 'number') {
      out.exclusiveMaximum = out.maximum;
      delete out.maximum;
    } else delete out.exclusiveMaximum;
  }
  if (out.nullable !== undefined) {
    const nullable = out.nullable === true;
    delete out.nullable;
    if (nullable) return allowNull(out);
  }
  return out;
}

function allowNull(schema: JsonObject): JsonObject {
  if (typeof schema.type === 'string' && schema.$ref === undefined && schema.allOf === undefined) {
    const withNull: JsonObject = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) withNull.enum = [...schema.enum, null];
    return withNull;
  }
  return { anyOf: [schema, { type: 'null' }] };
}

function formatErrors(errors: ErrorObject[]): string {
  // anyOf/oneOf produce one error per branch plus a summary; keep them all but make each line self-explaining.
  return errors
    .map((e) => {
      const where = e.instancePath || '(root)';
      const extra =
        e.keyword === 'additionalProperties'
          ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'`
          : e.keyword === 'enum'
            ? ` ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`
            : '';
      return `  ${where}: ${e.message ?? e.keyword}${extra} (schema ${e.schemaPath})`;
    })
    .join('\n');
}
