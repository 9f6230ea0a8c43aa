/**
 * How every OpenAI chat parameter is handled by the Cohere adapter: as data, so the request builder
 * refuses what Cohere cannot honour and docs/providers.md shows the same table.
 */
import { GatewayError } from '../../core/errors.js';

export interface ParameterRule {
  /** What happens to the parameter, as shown in docs/providers.md. */
  doc: string;
  /** Returns a reason when this value cannot be honoured: the request is refused with 400 naming it. */
  refuse?: (value: unknown) => string | undefined;
}

const always =
  (reason: string) =>
  (value: unknown): string | undefined =>
    value === undefined || value === null ? undefined : reason;

export const COHERE_CHAT_PARAMETERS: Record<string, ParameterRule> = {
  model: { doc: '→ model' },
  messages: {
    doc: '→ messages (system/developer → system, tool → tool with tool_call_id, images → image_url)',
  },
  stream: { doc: '→ stream' },
  stream_options: { doc: 'include_usage: the gateway adds the usage chunk from message-end' },
  n: { doc: 'fan-out: the gateway sends n calls and merges the choices' },
  temperature: { doc: '→ temperature' },
  top_p: { doc: '→ p' },
  max_tokens: { doc: '→ max_tokens' },
  max_completion_tokens: { doc: '→ max_tokens (wins over max_tokens)' },
  stop: { doc: '→ stop_sequences' },
  seed: { doc: '→ seed' },
  frequency_penalty: { doc: '→ frequency_penalty' },
  presence_penalty: { doc: '→ presence_penalty' },
  tools: {
    doc: '→ tools (any `strict: true` → strict_tools, when every tool offered has a required parameter, as Cohere needs; else not strict)',
  },
  tool_choice: {
    doc: 'none → NONE, required → REQUIRED, auto → omitted, a named function → tools restricted to it + REQUIRED, allowed_tools → tools restricted to the allowed ones + its mode (required → REQUIRED)',
  },
  parallel_tool_calls: { doc: 'dropped: Cohere has no switch; it may still return several calls' },
  response_format: {
    doc: 'json_object → {type: json_object}; json_schema → {type: json_object, json_schema}',
  },
  thinking: { doc: '→ thinking {type, token_budget ← budget_tokens}; thinking text back in content_blocks' },
  reasoning_effort: {
    doc: 'none/minimal → thinking disabled, otherwise thinking enabled (unless `thinking` is set)',
  },
  user: { doc: 'dropped (no equivalent)' },
  metadata: { doc: 'dropped (no equivalent)' },
  store: { doc: 'dropped (no equivalent)' },
  service_tier: { doc: 'dropped (no equivalent)' },
  verbosity: { doc: 'dropped (no equivalent)' },
  prompt_cache_key: { doc: 'dropped (Cohere caches prompts on its own)' },
  safety_identifier: { doc: 'dropped (no equivalent)' },
  logit_bias: {
    doc: 'refused (400): not supported by Cohere',
    refuse: always('Cohere does not support logit_bias'),
  },
  logprobs: {
    doc: 'refused (400) when true: Cohere log-probabilities do not map to OpenAI tokens',
    refuse: (v) => (v === true ? 'log-probabilities are not supported for Cohere' : undefined),
  },
  top_logprobs: {
    doc: 'refused (400): see logprobs',
    refuse: always('log-probabilities are not supported for Cohere'),
  },
  functions: {
    doc: 'refused (400): use tools',
    refuse: always('the deprecated `functions` are not supported for Cohere; use `tools`'),
  },
  function_call: {
    doc: 'refused (400): use tool_choice',
    refuse: always('the deprecated `function_call` is not supported for Cohere; use `tool_choice`'),
  },
  modalities: {
    doc: 'text only; refused (400) when audio is asked for',
    refuse: (v) =>
      Array.isArray(v) && v.some((m) => m !== 'text') ? 'Cohere produces text only' : undefined,
  },
  audio: { doc: 'refused (400)', refuse: always('Cohere produces text only') },
  prediction: { doc: 'refused (400)', refuse: always('predicted outputs are not supported for Cohere') },
  web_search_options: { doc: 'refused (400)', refuse: always('web search is not supported for Cohere') },
};

/** Throws the 400 of the first parameter present in `body` that the rules refuse. */
export function assertParametersSupported(
  body: Record<string, unknown>,
  rules: Record<string, ParameterRule>,
): void {
  for (const [name, value] of Object.entries(body)) {
    const reason = rules[name]?.refuse?.(value);
    if (reason) throw new GatewayError('unsupported_parameter', `${reason}.`, { param: name });
  }
}

export function parameterDocs(rules: Record<string, ParameterRule>): Record<string, string> {
  return Object.fromEntries(Object.entries(rules).map(([name, rule]) => [name, rule.doc]));
}
