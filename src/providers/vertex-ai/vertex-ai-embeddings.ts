import { GatewayError } from '../../core/errors.js';
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

export interface VertexEmbedContentRequest {
  content: { parts: Array<{ text: string }> };
  outputDimensionality?: number;
}

export interface VertexEmbedContentResponse {
  embedding?: { values?: number[] };
  usageMetadata?: { promptTokenCount?: number; totalTokenCount?: number };
}

/**
 * The method a Vertex embedding model is called with. The text embedding models (`text-embedding-005`,
 * `text-multilingual-embedding-002`…) and `gemini-embedding-001` take `:predict`; the Gemini embedding models
 * after it (`gemini-embedding-2`, its previews) take `:embedContent` only, as Google's own SDK routes them.
 */
export type VertexEmbeddingMethod = 'predict' | 'embedContent';

export function vertexEmbeddingMethod(model: string): VertexEmbeddingMethod {
  if (model === 'gemini-embedding-001' || model.startsWith('gemini-embedding-001@')) return 'predict';
  return model.includes('gemini') ? 'embedContent' : 'predict';
}

/** Inputs one call takes: `:embedContent` one content, `:predict` one for gemini-embedding-001, else 250. */
export function vertexEmbeddingInputsPerCall(model: string): number {
  return model.startsWith('gemini') ? 1 : 250;
}

/** Vertex's bound on a `:predict` call's input tokens in all: it refuses more with 400. */
const PREDICT_TOKENS_PER_CALL = 20_000;

/** The most input tokens one call takes in all, where Vertex sets a bound (`:predict`). */
export function vertexEmbeddingTokensPerCall(model: string): number | undefined {
  return vertexEmbeddingMethod(model) === 'predict' ? PREDICT_TOKENS_PER_CALL : undefined;
}

/** OpenAI embeddings → Vertex `:predict` with one instance per input; `dimensions` → outputDimensionality. */
export function toVertexEmbeddingBody(body: EmbeddingRequest): VertexPredictEmbeddingRequest {
  const request: VertexPredictEmbeddingRequest = {
    instances: embeddingInputs(body, 'vertex-ai').map((content) => ({ content })),
  };
  if (typeof body.dimensions === 'number') request.parameters = { outputDimensionality: body.dimensions };
  return request;
}

/** OpenAI embeddings of one input → Vertex `:embedContent`; `dimensions` → outputDimensionality. */
export function toVertexEmbedContentBody(body: EmbeddingRequest): VertexEmbedContentRequest {
  const texts = embeddingInputs(body, 'vertex-ai');
  // The fan-out sends one input a call (vertexEmbeddingInputsPerCall); more reach here only unsplit.
  if (texts.length !== 1) {
    throw new GatewayError(
      'unsupported_parameter',
      `${body.model} on vertex-ai embeds one input per call (:embedContent)`,
      { param: 'input' },
    );
  }
  const request: VertexEmbedContentRequest = { content: { parts: [{ text: texts[0] }] } };
  if (typeof body.dimensions === 'number') request.outputDimensionality = body.dimensions;
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

/** Vertex `:embedContent` answer → OpenAI list of its one embedding; usage from usageMetadata. */
export function fromVertexEmbedContentResponse(
  res: VertexEmbedContentResponse,
  body: EmbeddingRequest,
): EmbeddingResponse {
  return toEmbeddingResponse([res.embedding?.values ?? []], body, res.usageMetadata?.promptTokenCount ?? 0);
}
