import type { EmbeddingResponse } from '../../core/openai-types.js';
import type { EmbeddingRequest } from '../../core/schemas/index.js';
import { embeddingInputs, toEmbeddingResponse } from '../google/index.js';

export interface VertexPredictEmbeddingRequest {
  instances: Array<{ content: string }>;
  parameters?: { outputDimensionality?: number };
}

export interface VertexPredictEmbeddingResponse {
  predictions?: Array<{
    embeddings?: { values?: number[]; statistics?: { token_count?: number; truncated?: boolean } };
  }>;
}

/** OpenAI embeddings → Vertex `:predict` with one instance per input; `dimensions` → outputDimensionality. */
export function toVertexEmbeddingBody(body: EmbeddingRequest): VertexPredictEmbeddingRequest {
  const request: VertexPredictEmbeddingRequest = {
    instances: embeddingInputs(body, 'vertex-ai').map((content) => ({ content })),
  };
  if (typeof body.dimensions === 'number') request.parameters = { outputDimensionality: body.dimensions };
  return request;
}

/** Vertex `:predict` answer → OpenAI list; usage is the sum of the per-input token counts. */
export function fromVertexEmbeddingResponse(
  res: VertexPredictEmbeddingResponse,
  body: EmbeddingRequest,
): EmbeddingResponse {
  const predictions = res.predictions ?? [];
  const tokens = predictions.reduce((sum, p) => sum + (p.embeddings?.statistics?.token_count ?? 0), 0);
  return toEmbeddingResponse(
    predictions.map((p) => p.embeddings?.values ?? []),
    body,
    tokens,
  );
}
