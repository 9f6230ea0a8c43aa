/**
 * Body of POST /v1/embeddings. Unknown keys pass through to the provider (`input_type` and the like).
 */
import { Type, type Static } from '@sinclair/typebox';
import { ModelField, TextOrTokens, UserField } from './common-fields.js';
import { compileRequestBodyValidator } from './request-body-validator.js';

export const EmbeddingRequestSchema = Type.Object(
  {
    input: TextOrTokens({ nonEmpty: true, maxItems: 2048 }),
    model: ModelField,
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(UserField),
  },
  { $id: 'EmbeddingRequest', title: 'Embedding request' },
);

export type EmbeddingRequest = Static<typeof EmbeddingRequestSchema>;

const validator = compileRequestBodyValidator(EmbeddingRequestSchema);

export function validateEmbeddingRequest(body: unknown): EmbeddingRequest {
  return validator.assert(body);
}
