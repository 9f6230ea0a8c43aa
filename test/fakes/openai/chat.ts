// Chat completion answers shaped after the recorded OpenAI responses in provider-fixtures/openai/chat/:
// same fields, same order of stream events (role chunk, content chunks, finish chunk, usage chunk).
import { fingerprintFor, newChatId, newToolCallId, unixNow } from './ids.js';
import { allMessagesText, countTokens, lastUserText, splitIntoPieces } from './request-text.js';

export interface ChatRequest {
  model?: string;
  messages?: unknown;
  n?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  tools?: { type?: string; function?: { name?: string } }[];
  tool_choice?: string | { type?: string; function?: { name?: string } };
  service_tier?: string | null;
}

/** The tier OpenAI names in its answer: flex and priority as asked for (flex is served on it or refused),
 * else the default tier. */
export function servedTier(asked: unknown): string {
  return asked === 'flex' || asked === 'priority' ? asked : 'default';
}

export interface ChatPlan {
  model: string;
  text: string;
  /** Set when the request forces a tool: the fake then calls it instead of answering in text. */
  tool?: { name: string; arguments: string };
  n: number;
  maxTokens?: number;
  promptTokens: number;
  fingerprint: string;
  serviceTier: string;
}

export function replyTextFor(name: string, request: ChatRequest): string {
  return `[${name}] ${lastUserText(request.messages) || 'Hello!'}`;
}

export function planChat(name: string, request: ChatRequest, textOverride?: string): ChatPlan {
  const text = textOverride ?? replyTextFor(name, request);
  return {
    model: typeof request.model === 'string' ? request.model : 'gpt-4o-mini',
    text,
    tool: forcedTool(request),
    n: Number.isInteger(request.n) && (request.n as number) > 1 ? Math.min(request.n as number, 16) : 1,
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    promptTokens: countTokens(allMessagesText(request.messages)),
    fingerprint: fingerprintFor(name),
    serviceTier: servedTier(request.service_tier),
  };
}

/** A tool is called only when `tool_choice` forces one: `required` (first tool) or a named function. */
function forcedTool(request: ChatRequest): ChatPlan['tool'] {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  if (tools.length === 0) return undefined;
  const choice = request.tool_choice;
  let name: string | undefined;
  if (choice === 'required') name = tools[0]?.function?.name;
  else if (typeof choice === 'object' && choice?.function?.name) name = choice.function.name;
  if (!name) return undefined;
  return { name, arguments: JSON.stringify({ input: lastUserText(request.messages) }) };
}

function usage(promptTokens: number, completionTokens: number) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The text limited to `maxTokens` words; `length` tells whether it was cut. */
function limitText(text: string, maxTokens: number | undefined): { text: string; cut: boolean } {
  if (maxTokens === undefined) return { text, cut: false };
  const pieces = splitIntoPieces(text);
  if (pieces.length <= maxTokens) return { text, cut: false };
  return { text: pieces.slice(0, Math.max(0, maxTokens)).join(''), cut: true };
}

export function chatCompletion(plan: ChatPlan) {
  const { text, cut } = limitText(plan.text, plan.maxTokens);
  const choices = [];
  let completionTokens = 0;
  for (let index = 0; index < plan.n; index++) {
    if (plan.tool) {
      choices.push({
        index,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: newToolCallId(),
              type: 'function',
              function: { name: plan.tool.name, arguments: plan.tool.arguments },
            },
          ],
          refusal: null,
          annotations: [],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      });
      completionTokens += countTokens(plan.tool.arguments);
    } else {
      choices.push({
        index,
        message: { role: 'assistant', content: text, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: cut ? 'length' : 'stop',
      });
      completionTokens += countTokens(text);
    }
  }
  return {
    id: newChatId(),
    object: 'chat.completion',
    created: unixNow(),
    model: plan.model,
    choices,
    usage: usage(plan.promptTokens, completionTokens),
    service_tier: plan.serviceTier,
    system_fingerprint: plan.fingerprint,
  };
}

/**
 * Every event of a streamed answer, in order, without the final `[DONE]`. `chunks` fixes the number of
 * content (or tool-argument) chunks per choice.
 */
export function chatCompletionChunks(plan: ChatPlan, includeUsage: boolean, chunks?: number): object[] {
  const id = newChatId();
  const created = unixNow();
  const base = {
    id,
    object: 'chat.completion.chunk',
    created,
    model: plan.model,
    service_tier: plan.serviceTier,
    system_fingerprint: plan.fingerprint,
  };
  // OpenAI sends `usage: null` on every chunk once usage was asked for, and omits it otherwise.
  const chunk = (choices: object[]) =>
    includeUsage ? { ...base, choices, usage: null } : { ...base, choices };
  const choice = (index: number, delta: object, finish: string | null = null) => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finish,
  });

  const events: object[] = [];
  const indexes = Array.from({ length: plan.n }, (_, i) => i);
  let completionTokens = 0;

  if (plan.tool) {
    const tool = plan.tool;
    const callIds = indexes.map(() => newToolCallId());
    events.push(chunk(indexes.map((i) => choice(i, { role: 'assistant', content: null, refusal: null }))));
    events.push(
      chunk(
        indexes.map((i) =>
          choice(i, {
            tool_calls: [
              { index: 0, id: callIds[i], type: 'function', function: { name: tool.name, arguments: '' } },
            ],
          }),
        ),
      ),
    );
    for (const piece of splitArguments(tool.arguments, chunks)) {
      events.push(
        chunk(indexes.map((i) => choice(i, { tool_calls: [{ index: 0, function: { arguments: piece } }] }))),
      );
    }
    events.push(chunk(indexes.map((i) => choice(i, {}, 'tool_calls'))));
    completionTokens = countTokens(tool.arguments) * plan.n;
  } else {
    const limited = limitText(plan.text, chunks === undefined ? plan.maxTokens : undefined);
    const pieces = splitIntoPieces(limited.text, chunks);
    events.push(chunk(indexes.map((i) => choice(i, { role: 'assistant', content: '', refusal: null }))));
    for (const piece of pieces) events.push(chunk(indexes.map((i) => choice(i, { content: piece }))));
    events.push(chunk(indexes.map((i) => choice(i, {}, limited.cut ? 'length' : 'stop'))));
    completionTokens = pieces.length * plan.n;
  }

  if (includeUsage) events.push({ ...base, choices: [], usage: usage(plan.promptTokens, completionTokens) });
  return events;
}

/** Argument deltas as OpenAI streams them: small slices of the JSON text. */
function splitArguments(args: string, chunks?: number): string[] {
  const count = chunks ?? Math.max(1, Math.ceil(args.length / 8));
  const pieces: string[] = [];
  const size = args.length / count;
  for (let i = 0; i < count; i++) pieces.push(args.slice(Math.round(i * size), Math.round((i + 1) * size)));
  return pieces;
}
