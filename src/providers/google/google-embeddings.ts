import { GatewayError } from '../../core/errors.js';
import type { EmbeddingResponse } from '../../core/openai-types.js';
import type { EmbeddingRequest } from '../../core/schemas/index.js';
import { embeddingToBase64 } from '../shared/embedding-base64.js';
import type { GeminiBatchEmbedRequest, GeminiBatchEmbedResponse } from './google-api-types.js';

/** Embedding inputs as texts; token arrays cannot be sent to Google, which tokenises itself. */
export function embeddingInputs(body: EmbeddingRequest, provider: string): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input as string[];
  throw new GatewayError(
    'unsupported_parameter',
    `input as token arrays is not supported by ${provider}; send text`,
    {
      param: 'input',
    },
  );
}

/** OpenAI embeddings → `:batchEmbedContents`, one request per input; `dimensions` → outputDimensionality. */
export function toGeminiBatchEmbedBody(body: EmbeddingRequest, provider: string): GeminiBatchEmbedRequest {
  const model = body.model.startsWith('models/') ? body.model : `models/${body.model}`;
  return {
    requests: embeddingInputs(body, provider).map((text) => {
      const request: GeminiBatchEmbedRequest['requests'][number] = { model, content: { parts: [{ text }] } };
      if (typeof body.dimensions === 'number') request.outputDimensionality = body.dimensions;
      return request;
    }),
  };
}

/** `:batchEmbedContents` answer → OpenAI list. The Gemini API reports no token counts, so usage is 0. */
export function fromGeminiBatchEmbedResponse(
  res: GeminiBatchEmbedResponse,
  body: EmbeddingRequest,
): EmbeddingResponse {
  return toEmbeddingResponse(
    (res.embeddings ?? []).map((e) => e.values),
    body,
    0,
  );
}

export function toEmbeddingResponse(
  vectors: number[][],
  body: EmbeddingRequest,
  promptTokens: number,
): EmbeddingResponse {
  const base64 = body.encoding_format === 'base64';
  return {
    object: 'list',
    data: vectors.map((values, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? embeddingToBase64(values) : values,
    })),
    model: body.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
