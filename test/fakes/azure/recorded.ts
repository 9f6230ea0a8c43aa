// Azure's recorded chat-completions stream (provider-fixtures/openai/chat/azure-model-router.1.chunks.txt):
// the source of the content-filter verdicts the fake attaches, and a stream the fake can replay as is.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { providerFixturesDir } from '../cohere/fixtures.js';

export const AZURE_CHAT_STREAM_FIXTURE = path.join(
  providerFixturesDir('openai'),
  'chat',
  'azure-model-router.1.chunks.txt',
);

export function readAzureChatStream(): Record<string, unknown>[] {
  return readFileSync(AZURE_CHAT_STREAM_FIXTURE, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Verdicts {
  prompt: unknown[];
  completion: Record<string, unknown>;
}

let verdicts: Verdicts | undefined;

/** The prompt and completion verdicts Azure sent in the recorded stream. */
export function recordedVerdicts(): Verdicts {
  if (verdicts) return verdicts;
  const events = readAzureChatStream();
  const first = events[0] as { prompt_filter_results: unknown[] };
  const withVerdict = events.find((event) => {
    const choice = (event.choices as Array<{ content_filter_results?: Record<string, unknown> }>)[0];
    return choice?.content_filter_results && Object.keys(choice.content_filter_results).length > 0;
  }) as { choices: Array<{ content_filter_results: Record<string, unknown> }> };
  verdicts = {
    prompt: first.prompt_filter_results,
    completion: withVerdict.choices[0]!.content_filter_results,
  };
  return verdicts;
}

/** A non-streamed answer assembled from the recorded stream: Azure's non-stream shape with the same data. */
export function assembledAzureChatCompletion(): Record<string, unknown> {
  const events = readAzureChatStream();
  const chunks = events.filter((event) => event.object === 'chat.completion.chunk') as Array<{
    id: string;
    created: number;
    model: string;
    choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
  }>;
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  const finish = chunks.map((chunk) => chunk.choices[0]?.finish_reason).find(Boolean) ?? 'stop';
  const usage = events.find((event) => event.usage)?.usage;
  return {
    id: chunks[0]!.id,
    object: 'chat.completion',
    created: chunks[0]!.created,
    model: chunks[0]!.model,
    system_fingerprint: null,
    prompt_filter_results: recordedVerdicts().prompt,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, annotations: [] },
        finish_reason: finish,
        logprobs: null,
        content_filter_results: recordedVerdicts().completion,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}
