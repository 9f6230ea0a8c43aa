// Legacy text completions, shaped after provider-fixtures/openai/completion/: streamed and non-streamed
// objects share the `text_completion` shape; with include_usage the last chunk has empty `choices`.
import { fingerprintFor, newCompletionId, unixNow } from './ids.js';
import { countTokens, promptText, splitIntoPieces } from './request-text.js';

export interface CompletionRequest {
  model?: string;
  prompt?: unknown;
  max_tokens?: number;
  stream_options?: { include_usage?: boolean } | null;
}

export function completionText(name: string, request: CompletionRequest): string {
  return `[${name}] ${promptText(request.prompt) || 'Hello!'}`;
}

function modelOf(request: CompletionRequest): string {
  return typeof request.model === 'string' ? request.model : 'gpt-3.5-turbo-instruct';
}

export function textCompletion(name: string, request: CompletionRequest, text: string) {
  const promptTokens = countTokens(promptText(request.prompt));
  const completionTokens = countTokens(text);
  return {
    id: newCompletionId(),
    object: 'text_completion',
    created: unixNow(),
    model: modelOf(request),
    system_fingerprint: fingerprintFor(name),
    choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

export function textCompletionChunks(
  name: string,
  request: CompletionRequest,
  text: string,
  includeUsage: boolean,
  chunks?: number,
): object[] {
  const base = { id: newCompletionId(), object: 'text_completion', created: unixNow() };
  const model = modelOf(request);
  const pieces = splitIntoPieces(text, chunks);
  const events: object[] = pieces.map((piece, i) => ({
    ...base,
    choices: [
      { text: piece, index: 0, logprobs: null, finish_reason: i === pieces.length - 1 ? 'stop' : null },
    ],
    model,
    system_fingerprint: fingerprintFor(name),
    usage: null,
  }));
  if (includeUsage) {
    const promptTokens = countTokens(promptText(request.prompt));
    events.push({
      ...base,
      model,
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: pieces.length,
        total_tokens: promptTokens + pieces.length,
      },
      choices: [],
    });
  }
  return events;
}
