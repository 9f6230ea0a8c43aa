/**
 * The config schema, as the gateway publishes it in its OpenAPI document (`components.schemas.Config`,
 * the same TypeBox schema the gateway validates configs with), compiled once in the browser. Fetched from
 * the gateway rather than bundled, so the editor always checks against the schema of the gateway it talks
 * to and the console imports nothing of the server's code.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { api } from './api';

interface PropertySchema {
  description?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: PropertySchema[];
}

interface ConfigSchema {
  properties?: Record<string, PropertySchema>;
}

let published: Promise<ConfigSchema> | undefined;
let compiled: Promise<ValidateFunction> | undefined;

/** The published config schema, asked for once (again after a failure). */
function configSchema(): Promise<ConfigSchema> {
  published ??= api<{ components: { schemas: { Config: ConfigSchema } } }>('/openapi.json')
    .then((document) => document.components.schemas.Config)
    .catch((error: unknown) => {
      published = undefined;
      throw error;
    });
  return published;
}

export function configValidator(): Promise<ValidateFunction> {
  compiled ??= configSchema()
    .then((schema) => new Ajv({ strict: false, allErrors: true }).compile(schema))
    .catch((error: unknown) => {
      compiled = undefined;
      throw error;
    });
  return compiled;
}

/** The values a setting of the config may take, in the schema's order, and what the schema says of it. */
export interface SettingChoices {
  values: string[];
  description: string | undefined;
}

/**
 * The values the config schema allows a top-level setting (a literal union, `anyOf` of `const`s, or an
 * `enum`). A virtual key's settings are the config's provider keys with the config's schemas
 * (docs/management-api.md), so these are the values the gateway takes for a stored credential too.
 */
export async function settingChoices(name: string): Promise<SettingChoices> {
  const property = (await configSchema()).properties?.[name];
  if (!property) throw new Error(`The gateway's config schema has no ${name}`);
  const values = property.enum ?? property.anyOf?.map((option) => option.const) ?? [];
  return {
    values: values.filter((value): value is string => typeof value === 'string'),
    description: property.description,
  };
}

/** `config.targets[0].retry: must be object` for each error, the path prefixed with `prefix`. */
export function describeErrors(errors: ErrorObject[] | null | undefined, prefix: string): string[] {
  return (errors ?? []).map((error) => {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
      .join('');
    const extra =
      error.keyword === 'additionalProperties'
        ? ` (${(error.params as { additionalProperty: string }).additionalProperty})`
        : '';
    return `${prefix}${path}: ${error.message ?? 'is not valid'}${extra}`;
  });
}
