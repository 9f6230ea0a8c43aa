import { GatewayError, ProviderError } from '../../core/errors.js';
import type { EmbeddingResponse } from '../../core/openai-types.js';
import type { EmbeddingRequest } from '../../core/schemas/index.js';
import { extraField } from '../shared/extra-field.js';
import { COHERE_DEFAULT_INPUT_TYPE } from './bedrock-config.js';
import { isOpaqueModelArn } from './bedrock-model-ids.js';

export type BedrockEmbeddingFamily = 'titan' | 'cohere';

/**
 * Which InvokeModel body a model takes; others are refused. An ARN that names no model (an application
 * inference profile, a provisioned or custom model) says nothing of it, so the target's `cloudc_base_model`
 * names the model behind it; without one the request is refused rather than sent in a guessed shape.
 */
export function embeddingFamily(modelId: string, baseModel?: string): BedrockEmbeddingFamily {
  const model = baseModel ?? modelId;
  if (model.includes('amazon.titan-embed')) return 'titan';
  if (model.includes('cohere.embed')) return 'cohere';
  if (baseModel === undefined && isOpaqueModelArn(modelId)) {
    throw new GatewayError(
      'provider_config_error',
      `bedrock cannot tell which embedding model ${modelId} runs: set cloudc_base_model to it ` +
        '(an amazon.titan-embed-* or cohere.embed-* model id)',
      { param: 'cloudc_base_model' },
    );
  }
  throw new GatewayError(
    'unsupported_parameter',
    `bedrock embeddings support amazon.titan-embed-* and cohere.embed-* models, not ${model}`,
    { param: baseModel === undefined ? 'model' : 'cloudc_base_model' },
  );
}

/** The most texts one InvokeModel call takes: Titan embeds one text, Cohere Embed at most 96. */
const TEXTS_PER_CALL: Record<BedrockEmbeddingFamily, number> = { titan: 1, cohere: 96 };

/**
 * Texts per call for the embeddings fan-out, or undefined for a model the adapter will refuse (its own 400
 * then names the reason).
 */
export function bedrockEmbeddingInputsPerCall(modelId: string, baseModel?: string): number | undefined {
  try {
    return TEXTS_PER_CALL[embeddingFamily(modelId, baseModel)];
  } catch {
    return undefined;
  }
}

function textInputs(input: EmbeddingRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input as string[];
  throw new GatewayError('unsupported_parameter', 'bedrock embeddings take text input, not token arrays', {
    param: 'input',
  });
}

/**
 * The InvokeModel body. Titan embeds one text per call (its API has no batch form), so more than one input
 * is refused; Cohere takes a `texts` array and needs an `input_type` (default `search_document`, or the
 * request's own `input_type`); Embed v4 takes `dimensions` as `output_dimension`.
 */
export function toBedrockEmbeddingBody(body: EmbeddingRequest, baseModel?: string): Record<string, unknown> {
  const family = embeddingFamily(String(body.model), baseModel);
  const texts = textInputs(body.input);
  if (family === 'titan') {
    if (texts.length !== 1) {
      throw new GatewayError(
        'unsupported_parameter',
        'amazon titan embedding models embed one input per request; send input as a single string',
        { param: 'input' },
      );
    }
    return { inputText: texts[0], ...(body.dimensions ? { dimensions: body.dimensions } : {}) };
  }
  // Embed v4 sizes its vectors (output_dimension: 256, 512, 1024 or 1536); Embed v3 has no such field.
  const sized = /(^|[./])cohere\.embed-v4/.test(baseModel ?? String(body.model));
  if (body.dimensions !== undefined && !sized) {
    throw new GatewayError(
      'unsupported_parameter',
      'dimensions is supported on bedrock by Cohere Embed v4 only (cohere.embed-v4), not by Embed v3',
      { param: 'dimensions' },
    );
  }
  const inputType = extraField(body, 'input_type');
  return {
    texts,
    input_type: typeof inputType === 'string' ? inputType : COHERE_DEFAULT_INPUT_TYPE,
    ...(body.dimensions !== undefined ? { output_dimension: body.dimensions } : {}),
  };
}

function encode(vector: number[], format: EmbeddingRequest['encoding_format']): number[] | string {
  if (format !== 'base64') return vector;
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** The InvokeModel answer → OpenAI's embedding list. Cohere's token count comes in a response header. */
export function fromBedrockEmbeddingResponse(
  body: EmbeddingRequest,
  answer: unknown,
  headers: Record<string, string>,
  baseModel?: string,
): EmbeddingResponse {
  const family = embeddingFamily(String(body.model), baseModel);
  const invalid = (what: string) =>
    new ProviderError({
      status: 502,
      provider: 'bedrock',
      message: `bedrock embedding answer lacks ${what}`,
      code: 'upstream_invalid_response',
    });
  let vectors: number[][];
  let tokens: number;
  if (family === 'titan') {
    const titan = answer as { embedding?: number[]; inputTextTokenCount?: number };
    if (!Array.isArray(titan?.embedding)) throw invalid('embedding');
    vectors = [titan.embedding];
    tokens = titan.inputTextTokenCount ?? 0;
  } else {
    const cohere = answer as { embeddings?: number[][] | { float?: number[][] } };
    const embeddings = Array.isArray(cohere?.embeddings) ? cohere.embeddings : cohere?.embeddings?.float;
    if (!Array.isArray(embeddings)) throw invalid('embeddings');
    vectors = embeddings;
    tokens = Number(headers['x-amzn-bedrock-input-token-count'] ?? 0) || 0;
  }
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encode(vector, body.encoding_format),
    })),
    model: String(body.model),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
