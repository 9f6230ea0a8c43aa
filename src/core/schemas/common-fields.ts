/**
 * Fields shared by the chat, text-completion and embedding request bodies, with the limits of the
 * interface spec. Fields the OpenAI document marks nullable accept null, which means "not set".
 */
import { Type, type TSchema, type TUnion, type TNull } from '@sinclair/typebox';
import { withKeyErrorMessage } from '../validator/explain-error.js';

export function Nullable<T extends TSchema>(schema: T): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()]);
}

/**
 * ±(2^63 − 1). JSON numbers are read as doubles, and the nearest double to 2^63 − 1 is 2^63, so
 * that is the bound: 9223372036854775807 passes, the next representable number does not.
 */
const INT64_MAX = 2 ** 63;

export const ModelField = Type.String({ minLength: 1, description: 'Model id, passed to the provider.' });

export const TemperatureField = Nullable(Type.Number({ minimum: 0, maximum: 2, description: 'Default 1.' }));
export const TopPField = Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Default 1.' }));
export const PenaltyField = Nullable(Type.Number({ minimum: -2, maximum: 2, description: 'Default 0.' }));
export const NField = Nullable(Type.Integer({ minimum: 1, maximum: 128, description: 'Default 1.' }));
export const SeedField = Nullable(Type.Integer({ minimum: -INT64_MAX, maximum: INT64_MAX }));
export const MaxTokensField = Nullable(Type.Integer({ minimum: 0 }));
export const UserField = Type.String({ description: 'End-user identifier.' });

/**
 * OpenAI's `Metadata`, on the bodies that take it (chat completions, responses). Its limits are checked
 * by checkMetadataLimits after the schema: characters are code points, which a schema here cannot count.
 */
export const MetadataField = Nullable(
  Type.Record(Type.String(), Type.String(), {
    description: 'At most 16 pairs; keys of at most 64 characters, values of at most 512.',
  }),
);
export const StreamField = Nullable(Type.Boolean());

export const StopField = Nullable(
  Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 4 })], {
    description: 'Up to 4 stop sequences.',
  }),
);

export const LogitBiasField = Nullable(
  withKeyErrorMessage(
    Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Number({ minimum: -100, maximum: 100 }), {
      additionalProperties: false,
      description: 'Maps token ids (strings of digits) to a bias from -100 to 100.',
    }),
    'is not a token id: logit_bias keys must be strings of digits',
  ),
);

export const StreamOptionsField = Nullable(
  Type.Object(
    {
      include_usage: Type.Optional(Type.Boolean()),
      include_obfuscation: Type.Optional(Type.Boolean()),
    },
    { description: 'Only when stream is true.' },
  ),
);

/** A single string, strings, token ids, or arrays of token ids (completions prompt, embeddings input). */
export function TextOrTokens(options: { nonEmpty: boolean; maxItems?: number }) {
  const bound = options.maxItems === undefined ? {} : { maxItems: options.maxItems };
  const text = Type.String(options.nonEmpty ? { minLength: 1 } : {});
  return Type.Union([
    text,
    Type.Array(text, options.nonEmpty ? { minItems: 1, ...bound } : bound),
    Type.Array(Type.Integer(), { minItems: 1, ...bound }),
    Type.Array(Type.Array(Type.Integer(), { minItems: 1 }), { minItems: 1, ...bound }),
  ]);
}
