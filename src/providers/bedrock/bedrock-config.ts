/** Bedrock Runtime addresses, the signing service, and what the adapter accepts as a region. */
export const BEDROCK_SIGNING_SERVICE = 'bedrock';

/** AWS region names, e.g. `us-east-1`, `eu-central-2`, `us-gov-west-1`. */
export const BEDROCK_REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d$/;

export function bedrockRuntimeBaseUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** The forced tool that carries a `response_format: json_object` answer (Converse has no JSON mode). */
export const JSON_RESPONSE_TOOL_NAME = 'json';

/** Anthropic models need max_tokens above the thinking budget; this much room is left for the answer. */
export const THINKING_ANSWER_TOKENS = 4096;

/** Cohere embeddings on Bedrock need an input_type; OpenAI has none, so documents are assumed. */
export const COHERE_DEFAULT_INPUT_TYPE = 'search_document';
