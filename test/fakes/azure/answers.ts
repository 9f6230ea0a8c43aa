// Chat answers in Azure OpenAI's shape, made from the request: OpenAI's fields plus the content-filter
// verdicts Azure adds (a leading prompt-verdict chunk in streams, a verdict per choice).
import { newChatId, newToolCallId, unixNow } from '../openai/ids.js';
import { allMessagesText, countTokens, lastUserText, splitIntoPieces } from '../openai/request-text.js';
import { recordedVerdicts } from './recorded.js';

export interface AzureChatRequest {
  model?: string;
  messages?: unknown;
  tools?: Array<{ function?: { name?: string } }>;
  tool_choice?: string | { function?: { name?: string } };
  parallel_tool_calls?: boolean;
  stream_options?: { include_usage?: boolean } | null;
}

interface Plan {
  model: string;
  text: string;
  calls: Array<{ id: string; name: string; arguments: string }>;
  promptTokens: number;
}

/**
 * A reply echoes the last user message. Tools are called only when `tool_choice` forces them: a named
 * function is called once; `required` calls every offered tool (in parallel) unless
 * `parallel_tool_calls` is false, then only the first.
 */
export function planAzureChat(request: AzureChatRequest, deployment: string, textOverride?: string): Plan {
  const tools = (request.tools ?? []).map((tool) => tool.function?.name).filter((n): n is string => !!n);
  let names: string[] = [];
  if (request.tool_choice === 'required')
    names = request.parallel_tool_calls === false ? tools.slice(0, 1) : tools;
  else if (typeof request.tool_choice === 'object' && request.tool_choice.function?.name) {
    names = [request.tool_choice.function.name];
  }
  const user = lastUserText(request.messages);
  return {
    model: `${deployment}-2024-08-06`,
    text: textOverride ?? `[azure] ${user || 'Hello!'}`,
    calls: names.map((name) => ({ id: newToolCallId(), name, arguments: JSON.stringify({ input: user }) })),
    promptTokens: countTokens(allMessagesText(request.messages)),
  };
}

function usage(plan: Plan) {
  const completion = plan.calls.length
    ? plan.calls.reduce((sum, call) => sum + countTokens(call.arguments), 0)
    : countTokens(plan.text);
  return {
    prompt_tokens: plan.promptTokens,
    completion_tokens: completion,
    total_tokens: plan.promptTokens + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function azureChatCompletion(plan: Plan) {
  const message = plan.calls.length
    ? {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: plan.calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      }
    : { role: 'assistant', content: plan.text, refusal: null, annotations: [] };
  return {
    id: newChatId(),
    object: 'chat.completion',
    created: unixNow(),
    model: plan.model,
    system_fingerprint: 'fp_azure0001',
    prompt_filter_results: recordedVerdicts().prompt,
    choices: [
      {
        index: 0,
        message,
        finish_reason: plan.calls.length ? 'tool_calls' : 'stop',
        logprobs: null,
        content_filter_results: plan.calls.length ? {} : recordedVerdicts().completion,
      },
    ],
    usage: usage(plan),
  };
}

/** Every `data:` payload of the streamed answer, without `[DONE]`, in the order Azure sends them. */
export function azureChatCompletionChunks(plan: Plan, includeUsage: boolean): object[] {
  const base = {
    id: newChatId(),
    object: 'chat.completion.chunk',
    created: unixNow(),
    model: plan.model,
    system_fingerprint: 'fp_azure0001',
  };
  const chunk = (delta: object, finish: string | null = null, verdict: object = {}) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null, content_filter_results: verdict }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: object[] = [
    // Azure's first event: the prompt's verdicts, with empty id, model and object.
    {
      choices: [],
      created: 0,
      id: '',
      model: '',
      object: '',
      prompt_filter_results: recordedVerdicts().prompt,
    },
    chunk({ role: 'assistant', content: plan.calls.length ? null : '', refusal: null }),
  ];
  if (plan.calls.length) {
    plan.calls.forEach((call, index) => {
      events.push(
        chunk({
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      );
      for (const piece of call.arguments.match(/[\s\S]{1,8}/g) ?? []) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
    events.push(chunk({}, 'tool_calls'));
  } else {
    for (const piece of splitIntoPieces(plan.text))
      events.push(chunk({ content: piece }, null, recordedVerdicts().completion));
    events.push(chunk({}, 'stop'));
  }
  if (includeUsage) events.push({ ...base, choices: [], usage: usage(plan) });
  return events;
}
