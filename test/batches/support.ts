/** What the batch tests share: an SDK client under a config, JSONL inputs, waiting for a batch's state or
 * for a condition. */
import OpenAI, { toFile } from 'openai';
import type { FakeUpstream } from '../fakes/openai/server.js';

export type Config = Record<string, unknown>;

/** The timeout of a test that runs a whole batch: CI runs many test files at once on two cores. */
export const SLOW_TEST_MS = 120_000;

export function target(fake: FakeUpstream, extra: Config = {}): Config {
  return { provider: 'openai', api_key: 'sk-test', custom_host: fake.url, ...extra };
}

export function sdk(url: string, apiKey: string, config?: Config): OpenAI {
  return new OpenAI({
    baseURL: url,
    apiKey: 'unused',
    maxRetries: 0,
    timeout: 60_000,
    defaultHeaders: {
      'x-gateway-api-key': apiKey,
      ...(config && { 'x-gateway-config': JSON.stringify(config) }),
    },
  });
}

export interface ChatLine {
  custom_id: string;
  method: 'POST';
  url: string;
  body: unknown;
}

export function chatLine(customId: string, model = 'gpt-4o-mini', text = customId): ChatLine {
  return {
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: text }] },
  };
}

export function jsonl(lines: readonly unknown[]): string {
  return lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';
}

export async function upload(client: OpenAI, text: string, name = 'input.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'batch' });
}

/** `completion_window: "immediate"` is the gateway's own value, beyond the SDK's type. */
export async function createBatch(
  client: OpenAI,
  inputFileId: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return client.batches.create(
    {
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: 'immediate' as '24h',
      ...extra,
    },
    { headers },
  );
}

export async function waitFor(
  client: OpenAI,
  batchId: string,
  done: (batch: OpenAI.Batches.Batch) => boolean,
  timeoutMs = 60_000,
): Promise<OpenAI.Batches.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(batchId);
    if (done(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} is still ${batch.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const finished = (batch: OpenAI.Batches.Batch) =>
  ['completed', 'failed', 'cancelled', 'expired'].includes(batch.status);

export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: Record<string, unknown> } | null;
  error: { code: string; message: string } | null;
}

export async function contentLines(client: OpenAI, fileId: string | null | undefined): Promise<OutputLine[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as OutputLine);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (asked every few milliseconds); throws past `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}
