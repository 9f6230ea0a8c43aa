/**
 * What a Bedrock model id says of the model behind it. Ids may carry a cross-region inference profile's
 * prefix (`us.`, `eu.`, `apac.`, `global.`) or be an ARN; an ARN that names no model is opaque.
 */

/**
 * ARNs that name no model (an application inference profile, a provisioned or custom model, an imported one):
 * what runs behind them is only known to Bedrock.
 */
const OPAQUE_MODEL_ARN =
  /^arn:aws[a-z-]*:bedrock:[^:]*:\d*:(application-inference-profile|provisioned-model|custom-model|custom-model-deployment|imported-model)\//;

export function isOpaqueModelArn(modelId: string): boolean {
  return OPAQUE_MODEL_ARN.test(modelId);
}

export function isAnthropicModel(modelId: string): boolean {
  return /(^|\.|\/)anthropic\./.test(modelId) || modelId.includes('anthropic.claude');
}

/**
 * Extended thinking through Converse is Anthropic's own request field, so only Claude models take it; a model
 * id that does not say which model it runs gets it too, and Bedrock refuses it if that is not Claude.
 */
export function mayBeAnthropicModel(modelId: string): boolean {
  return isAnthropicModel(modelId) || isOpaqueModelArn(modelId);
}

/**
 * How a model takes Converse's `toolChoice` beyond auto (the ToolChoice reference and the Converse
 * supported-features table): a named tool (`tool`) Claude 3 and later and Nova only; `any` also Mistral
 * Large; the other models (Llama, Mistral's others, Cohere Command R, DeepSeek, Jamba…) refuse the field. An
 * opaque ARN is assumed to take it, and Bedrock judges.
 */
export type BedrockToolChoiceSupport = 'tool' | 'any' | 'none';

export function toolChoiceSupport(modelId: string): BedrockToolChoiceSupport {
  if (isAnthropicModel(modelId) || /(^|\.|\/)amazon\.nova-/.test(modelId) || isOpaqueModelArn(modelId)) {
    return 'tool';
  }
  if (/(^|\.|\/)mistral\.mistral-large-/.test(modelId)) return 'any';
  return 'none';
}

/**
 * Where a model takes Converse's cache checkpoints (Bedrock's prompt-caching table): Claude 3.5 Haiku, 3.7
 * Sonnet and every Claude since in system, messages and tools; Nova in system and messages only; the others
 * (Claude 3, Claude 3.5 Sonnet, whose caching stayed a closed preview, Llama, Mistral, DeepSeek…) nowhere:
 * Converse refuses a request with a cachePoint they cannot take. An opaque ARN is assumed to take them all,
 * and Bedrock judges.
 */
export type BedrockCachePointSupport = 'all' | 'messages' | 'none';

export function cachePointSupport(modelId: string): BedrockCachePointSupport {
  if (isOpaqueModelArn(modelId)) return 'all';
  if (isAnthropicModel(modelId)) {
    return /claude-(v\d|instant|3-(haiku|sonnet|opus)|3-5-sonnet)/.test(modelId) ? 'none' : 'all';
  }
  return /(^|\.|\/)amazon\.nova-/.test(modelId) ? 'messages' : 'none';
}
