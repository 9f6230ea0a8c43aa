/**
 * Each provider's usage as the gateway reports and prices it: the `openai` SDK through a real gateway to
 * fakes that answer with the providers' recorded wire shapes; the cost checked against the provider's own
 * billing terms and the shipped price table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCohereJson } from '../fakes/cohere/fixtures.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, traceHeaders, userMessage } from '../routing/support.js';

const PER_MILLION = 1e-6;

let gateway: TestGateway;
let cohere: FakeCohere;

beforeAll(async () => {
  cohere = await startFakeCohere();
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await cohere?.close();
});

describe('Cohere usage', () => {
  const config = () => ({ provider: 'cohere', api_key: cohere.apiKey, custom_host: cohere.url });
  // command-a: $2.50 in, $10 out per million billed tokens.
  const commandA = (input: number, output: number) => (input * 2.5 + output * 10) * PER_MILLION;

  it('reports and prices the billed units, not the tokens of the template Cohere wraps the prompt in', async () => {
    const recorded = readCohereJson('cohere-text') as {
      usage: {
        billed_units: { input_tokens: number; output_tokens: number };
        tokens: { input_tokens: number };
      };
    };
    const billed = recorded.usage.billed_units;
    expect(recorded.usage.tokens.input_tokens).toBeGreaterThan(billed.input_tokens);
    cohere.enqueue({ fixture: 'cohere-text' });
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config(), headers)
      .chat.completions.create({ model: 'command-a-03-2025', messages: userMessage('capital of France?') })
      .withResponse();
    expect(data.usage).toEqual({
      prompt_tokens: billed.input_tokens,
      completion_tokens: billed.output_tokens,
      total_tokens: billed.input_tokens + billed.output_tokens,
    });
    const expected = commandA(billed.input_tokens, billed.output_tokens);
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it('prices a stream from the billed units of its message-end', async () => {
    // Its message-end: billed 8 in, 50 out; tokens 1394 in (1360 of them cached), 54 out.
    cohere.enqueue({ fixture: 'cohere-reasoning' });
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, config(), headers).chat.completions.create({
      model: 'command-a-03-2025',
      messages: userMessage('think'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toEqual({ prompt_tokens: 8, completion_tokens: 50, total_tokens: 58 });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(commandA(8, 50), 12);
  });
});
