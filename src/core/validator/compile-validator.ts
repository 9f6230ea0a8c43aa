/**
 * One compiled checker per schema, built once at module load. The compiled TypeBox check is the
 * hot path (it is generated code, no allocation on success); the error walker runs only when a
 * value has already failed, to name the field and the rule.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError, type ErrorCode } from '../errors.js';
import { explainError, shapeOf, unknownKeyMessage, type SchemaErrorDetail } from './explain-error.js';

export interface SchemaValidator<T extends TSchema> {
  /** Returns the value typed when it conforms, otherwise throws a GatewayError naming the field. */
  assert(value: unknown): Static<T>;
}

export interface ValidatorOptions {
  /** The error code thrown: `invalid_body`, `invalid_config`, ... */
  code: ErrorCode;
  /** Prefix of every reported path: '' for request bodies, 'config' for configs. */
  rootPath: string;
  /** What the value is called when it is not an object at all ("The request body"). */
  subject: string;
  /** Param reported when the value is not an object (null for bodies). */
  rootParam: string | null;
  /** Our spelling of a key the value's objects do not have, where the key is a known other spelling of
   * one (another casing, another product's name), so the error can say which key was meant. */
  spellingOf?: (key: string) => string | undefined;
}

export function compileValidator<T extends TSchema>(
  schema: T,
  options: ValidatorOptions,
): SchemaValidator<T> {
  const compiled = TypeCompiler.Compile(schema);
  const refs = new Map<string, TSchema>(typeof schema.$id === 'string' ? [[schema.$id, schema]] : []);

  const withSpelling = (detail: SchemaErrorDetail): SchemaErrorDetail => {
    if (!detail.unknownKey || !options.spellingOf) return detail;
    const { key, allowed } = detail.unknownKey;
    const spelling = options.spellingOf(key);
    if (spelling === undefined || !allowed.includes(spelling)) return detail;
    return { ...detail, message: unknownKeyMessage(allowed, spelling) };
  };

  const firstError = (value: unknown): SchemaErrorDetail => {
    let explained: SchemaErrorDetail | null = null;
    try {
      explained = explainError(schema, value, options.rootPath, refs);
    } catch {
      // A schema construct the walker does not know: fall through to the compiled errors.
    }
    if (explained !== null) return withSpelling(explained);
    // The walker and the compiled check should always agree; if they ever do not, still answer
    // with the compiled checker's own first error rather than accept an invalid value.
    const raw = compiled.Errors(value).First();
    return { path: pointerToPath(options.rootPath, raw?.path ?? ''), message: raw?.message ?? 'is invalid' };
  };

  return {
    assert(value: unknown): Static<T> {
      if (shapeOf(value) !== 'object' || value === undefined) {
        throw new GatewayError(options.code, `${options.subject} must be a JSON object`, {
          param: options.rootParam,
        });
      }
      if (compiled.Check(value)) return value;
      const error = firstError(value);
      throw new GatewayError(options.code, `${error.path} ${error.message}`, { param: error.path });
    },
  };
}

/** Throws the code's GatewayError for a rule checked outside the schema. */
export function fieldError(code: ErrorCode, path: string, message: string): GatewayError {
  return new GatewayError(code, `${path} ${message}`, { param: path });
}

function pointerToPath(root: string, pointer: string): string {
  let path = root;
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path = /^\d+$/.test(key) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
  }
  return path;
}
