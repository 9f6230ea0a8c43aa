/**
 * The config schema, as the gateway publishes it in its OpenAPI document (`components.schemas.Config`,
 * the same TypeBox schema the gateway validates configs with), compiled once in the browser. Fetched from
 * the gateway rather than bundled, so the editor always checks against the schema of the gateway it talks
 * to and the console imports nothing of the server's code.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { api } from './api';

let compiled: Promise<ValidateFunction> | undefined;

export function configValidator(): Promise<ValidateFunction> {
  compiled ??= api<{ components: { schemas: { Config: object } } }>('/openapi.json')
    .then((document) =>
      new Ajv({ strict: false, allErrors: true }).compile(document.components.schemas.Config),
    )
    .catch((error: unknown) => {
      compiled = undefined;
      throw error;
    });
  return compiled;
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
