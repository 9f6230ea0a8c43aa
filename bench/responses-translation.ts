/**
 * What the translated Responses path costs over the chat path it runs through. Two measurements:
 *
 * 1. **Translation alone, in-process**: a Responses request (instructions, a 6-item conversation with a
 *    function call and its output, a function tool, json_schema) validated and turned into the chat
 *    request, and a chat answer turned into the Response object — streamed (8 chunks to events) and not.
 *    p50 / p99 in microseconds.
 * 2. **End to end**: the same gateway (in this process, on a fresh SQLite file) in front of the bench's
 *    fake upstream (its own process, 0 ms latency), N sequential requests per path over one kept-alive
 *    connection after a warm-up: `POST /v1/chat/completions` against `POST /v1/responses` with
 *    `store: false` (translation only) and `store: true` (translation and the store's writes), JSON and
 *    streamed. Added = responses p50 − chat p50. The client shares the gateway's process, so the absolute
 *    figures are higher than `npm run bench`'s; the difference between the paths is the figure.
 *
 * Bounded by count: `npx tsx bench/responses-translation.ts [requests] [iterations]` (defaults 2,000 and
 * 20,000; warm-ups a tenth of each). Prints one JSON object.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { validateResponsesRequest } from '../src/core/schemas/responses-request.js';
import type { ChatCompletion, ChatCompletionChunk } from '../src/core/openai-types.js';
import { ResponseAssembler } from '../src/gateway/responses/response-assembler.js';
import { inputItemsOf, prepareResponseCall } from '../src/gateway/responses/response-call.js';
import { toChatRequest } from '../src/gateway/responses/to-chat-request.js';
import type { Store } from '../src/store/types.js';
import { compileChildren } from './compile-children.js';
import { startScript } from './processes.js';
import { round, summarise } from './stats.js';
import { startInProcessGateway } from './in-process-gateway.js';

const REQUESTS = Number(process.argv[2] ?? 2_000);
const ITERATIONS = Number(process.argv[3] ?? 20_000);

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

const tool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const request = {
  model: 'bench-lat-0',
  instructions: 'You are a concise assistant. Answer in one sentence.',
  input: [
    { role: 'user', content: 'What is the weather in Paris, and should I take an umbrella today?' },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: '{"temp":14,"rain":0.7}' },
    { role: 'assistant', content: 'It is 14 °C in Paris with a 70% chance of rain: take an umbrella.' },
    { role: 'user', content: 'And in Lyon?' },
    { role: 'user', content: [{ type: 'input_text', text: 'Answer as JSON.' }] },
  ],
  tools: [tool],
  text: {
    format: {
      type: 'json_schema',
      name: 'answer',
      schema: { type: 'object', properties: { answer: { type: 'string' } } },
    },
  },
};

const completion: ChatCompletion = {
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'bench-lat-0',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello from the bench upstream.', refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    },
  ],
  usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 },
};

const chunks: ChatCompletionChunk[] = [
  { role: 'assistant' as const, content: '' },
  ...Array.from({ length: 6 }, (_, i) => ({ content: ` word${i}` })),
  {},
].map((delta, i, all) => ({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'bench-lat-0',
  choices: [{ index: 0, delta, finish_reason: i === all.length - 1 ? 'stop' : null }],
}));

function timeSync(iterations: number, work: () => void): { p50_us: number; p99_us: number } {
  for (let i = 0; i < Math.ceil(iterations / 10); i++) work();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    work();
    samples.push((performance.now() - started) * 1000);
  }
  const { p50, p99 } = summarise(samples);
  return { p50_us: round(p50, 1), p99_us: round(p99, 1) };
}

async function translation(store: Store) {
  const shell = (await prepareResponseCall(store, 'unused', validateResponsesRequest(request))).shell;
  return {
    request: timeSync(ITERATIONS, () => {
      const body = validateResponsesRequest(request);
      toChatRequest(body, inputItemsOf(body.input));
    }),
    answer_json: timeSync(ITERATIONS, () => new ResponseAssembler(shell).fromCompletion(completion)),
    answer_stream: timeSync(ITERATIONS, () => {
      const assembler = new ResponseAssembler(shell);
      for (const chunk of chunks) JSON.stringify(assembler.push(chunk));
      JSON.stringify(assembler.finish().events);
    }),
  };
}

async function endToEnd(origin: string, adminKey: string, upstreamPort: number) {
  const client = new Client(origin, { pipelining: 0 });
  const headers = {
    'content-type': 'application/json',
    'x-gateway-api-key': adminKey,
    // A provider without the Responses API natively: the translation is what is measured.
    'x-gateway-provider': 'openai-compatible',
    'x-gateway-custom-host': `http://127.0.0.1:${upstreamPort}/v1`,
    authorization: 'Bearer sk-bench',
  };
  const chat = { model: 'bench-lat-0', messages: [{ role: 'user', content: 'Hello' }] };
  const responses = { model: 'bench-lat-0', input: 'Hello' };
  const paths: Record<string, { path: string; body: object }> = {
    chat: { path: '/v1/chat/completions', body: chat },
    responses_unstored: { path: '/v1/responses', body: { ...responses, store: false } },
    responses_stored: { path: '/v1/responses', body: responses },
    chat_stream: { path: '/v1/chat/completions', body: { ...chat, stream: true } },
    responses_stream_unstored: { path: '/v1/responses', body: { ...responses, store: false, stream: true } },
  };
  const results: Record<string, { p50_ms: number; p99_ms: number }> = {};
  try {
    for (const [name, { path: url, body }] of Object.entries(paths)) {
      const text = JSON.stringify(body);
      const once = async () => {
        const answer = await client.request({ method: 'POST', path: url, headers, body: text });
        const read = await answer.body.text();
        if (answer.statusCode !== 200) throw new Error(`${name}: ${answer.statusCode} ${read.slice(0, 300)}`);
      };
      for (let i = 0; i < Math.ceil(REQUESTS / 10); i++) await once();
      const samples: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const started = performance.now();
        await once();
        samples.push(performance.now() - started);
      }
      const { p50, p99 } = summarise(samples);
      results[name] = { p50_ms: round(p50), p99_ms: round(p99) };
    }
  } finally {
    await client.close();
  }
  const added = (name: string, base: string) => round(results[name]!.p50_ms - results[base]!.p50_ms);
  return {
    ...results,
    added_p50_ms: {
      responses_unstored: added('responses_unstored', 'chat'),
      responses_stored: added('responses_stored', 'chat'),
      responses_stream_unstored: added('responses_stream_unstored', 'chat_stream'),
    },
  };
}

async function main(): Promise<void> {
  const childDir = compileChildren(benchDir, repoRoot);
  const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {});
  const { server, adminKey, stop } = await startInProcessGateway('responses');
  try {
    const origin = await server.listen();
    const translated = await translation(server.deps.store);
    const measured = await endToEnd(origin, adminKey, upstream.port);
    console.log(
      JSON.stringify({
        requests: REQUESTS,
        iterations: ITERATIONS,
        translation_us: translated,
        end_to_end: measured,
        node: process.version,
      }),
    );
  } finally {
    await stop();
    await upstream.stop();
  }
}

await main();
