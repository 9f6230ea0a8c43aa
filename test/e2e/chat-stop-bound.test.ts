/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// A chat completion's `stop` is bounded by the target's provider, not by OpenAI's 4 for every provider: the
// openai SDK → the gateway → fakes of OpenAI, Anthropic (which sets no such small bound) and Gemini (5).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-stop';
const SIX = ['one', 'two', 'three', 'four', 'five', 'six'];

let gateway: TestGateway;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let google: FakeGoogle;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  google = await startFakeGoogle();
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await anthropic?.close();
  await google?.close();
});

const toOpenAI = () =>
  gatewayOpenAI(gateway, { provider: 'openai', api_key: 'sk-test', custom_host: openai.url });
const toAnthropic = () =>
  gatewayOpenAI(gateway, { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const toGoogle = () =>
  gatewayOpenAI(gateway, { provider: 'google', api_key: google.apiKey, custom_host: google.url });

async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.catch((err: unknown) => err);
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('a chat completion’s stop', () => {
  it('sends more than 4 to Anthropic, which sets no such bound', async () => {
    const completion = await toAnthropic().chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Count' }],
      stop: SIX,
    });
    expect(completion.choices[0].message.content).toBeTruthy();
    expect((anthropic.requests.at(-1)!.body as any).stop_sequences).toEqual(SIX);
  });

  it('refuses more than OpenAI’s 4 with a 400 naming stop, before any call', async () => {
    const calls = openai.requests.length;
    const error = await refusal(
      toOpenAI().chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Count' }],
        stop: SIX.slice(0, 5),
      }),
    );
    expect(error.param).toBe('stop');
    expect(error.message).toContain('at most 4');
    expect(openai.requests.length).toBe(calls);
  });

  it('takes Gemini’s 5 and refuses a sixth, naming stop', async () => {
    google.enqueue({ fixture: 'google-text.json' });
    await toGoogle().chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Count' }],
      stop: SIX.slice(0, 5),
    });
    expect((google.requests.at(-1)!.body as any).generationConfig.stopSequences).toEqual(SIX.slice(0, 5));
    const calls = google.requests.length;
    const error = await refusal(
      toGoogle().chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Count' }],
        stop: SIX,
      }),
    );
    expect(error.param).toBe('stop');
    expect(error.message).toContain('at most 5');
    expect(google.requests.length).toBe(calls);
  });

  it('names the config’s override_params.stop when it is the config that sets them', async () => {
    const calls = openai.requests.length;
    const error = await refusal(
      gatewayOpenAI(gateway, {
        provider: 'openai',
        api_key: 'sk-test',
        custom_host: openai.url,
        override_params: { stop: SIX.slice(0, 5) },
      }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count' }] }),
    );
    expect(error.param).toBe('config.override_params.stop');
    expect(openai.requests.length).toBe(calls);
  });
});
