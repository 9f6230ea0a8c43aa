/**
 * OpenAI embeddings ↔ Cohere Embed v2. Cohere asks what the texts are for (`input_type`); OpenAI has no
 * such field, so `search_document` is sent unless the request carries Cohere's own `input_type`.
 * `encoding_format: base64` is produced here from the float vectors (little-endian float32, as OpenAI).
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { EmbeddingResponse } from '../../core/openai-types.js';
import type { EmbeddingRequest } from '../../core/schemas/index.js';
import { extraField } from '../shared/extra-field.js';
import type { CohereEmbedBody, CohereEmbedResponse, CohereInputType } from './cohere-api-types.js';
import { COHERE_PROVIDER_ID } from './cohere-error.js';

const INPUT_TYPES: readonly CohereInputType[] = [
  'search_document',
  'search_query',
  'classification',
  'clustering',
];
export const DEFAULT_INPUT_TYPE: CohereInputType = 'search_document';

/** The most texts an Embed v2 call takes ("total number of texts must be at most 96"). */
export const COHERE_TEXTS_PER_CALL = 96;

export function buildCohereEmbedBody(req: EmbeddingRequest): CohereEmbedBody {
  const texts = typeof req.input === 'string' ? [req.input] : req.input;
  if (!Array.isArray(texts) || !texts.every((text): text is string => typeof text === 'string')) {
    throw new GatewayError(
      'unsupported_parameter',
      'Cohere embeds text only; token arrays are not supported.',
      {
        param: 'input',
      },
    );
  }
  const inputType = extraField(req, 'input_type') ?? DEFAULT_INPUT_TYPE;
  if (!INPUT_TYPES.includes(inputType as CohereInputType)) {
    throw new GatewayError('invalid_body', `input_type must be one of ${INPUT_TYPES.join(', ')}.`, {
      param: 'input_type',
    });
  }
  const body: CohereEmbedBody = {
    model: req.model,
    texts,
    input_type: inputType as CohereInputType,
    embedding_types: ['float'],
  };
  if (req.dimensions !== undefined) body.output_dimension = req.dimensions;
  return body;
}

export function parseCohereEmbedResponse(req: EmbeddingRequest, raw: unknown): EmbeddingResponse {
  const body = raw as CohereEmbedResponse | null;
  const vectors = body?.embeddings?.float;
  if (!Array.isArray(vectors)) {
    throw new ProviderError({
      status: 502,
      message: 'Cohere returned an embed response without float embeddings.',
      provider: COHERE_PROVIDER_ID,
      code: 'upstream_invalid_response',
    });
  }
  const base64 = req.encoding_format === 'base64';
  const tokens = body?.meta?.billed_units?.input_tokens ?? 0;
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? floatsToBase64(vector) : vector,
    })),
    model: req.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

export function floatsToBase64(vector: number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => buffer.writeFloatLE(value, i * 4));
  return buffer.toString('base64');
}
