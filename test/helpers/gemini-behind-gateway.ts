/**
 * A gateway in front of a fake Gemini API (the google fake, or the vertex-ai fake that also answers Claude
 * models), for the end-to-end tests that call it with the openai SDK, and the calls those tests share.
 */
import type { IncomingHttpHeaders } from 'node:http';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll } from 'vitest';
import type { FakeGoogle } from '../fakes/google/server.js';
import type { FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from './gateway.js';
import { gatewayOpenAI } from './openai-client.js';

export interface GeminiBehindGateway<F extends FakeGoogle | FakeVertex> {
  gateway: TestGateway;
  fake: F;
  /** The openai SDK calling the gateway, its calls sent to the fake. */
  client: OpenAI;
  /** What the fake was last sent. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read free-form wire JSON
  lastRequest(): { path: string; body: any; headers: IncomingHttpHeaders };
  /** `request` answered by the fake with its recorded text (google-text.json). */
  answeredWithText(
    request: ChatCompletionCreateParamsNonStreaming,
  ): Promise<OpenAI.Chat.Completions.ChatCompletion>;
  /** A question about the image at `url`, answered by the fake with its recorded text. */
  askedAboutImage(url: string): Promise<OpenAI.Chat.Completions.ChatCompletion>;
  /** What a one-message chat call through `client` (this one unless given) is refused with. */
  refusal(client?: OpenAI): Promise<unknown>;
}

/**
 * Starts the fake (`startFake`) and a gateway before the tests of the block it is called in, the client
 * sending its calls to the fake with the config `target(fake)`, and closes both after; its fields are set
 * once the tests run.
 */
export function geminiBehindGateway<F extends FakeGoogle | FakeVertex>(
  startFake: () => Promise<F>,
  target: (fake: F) => Record<string, unknown>,
): GeminiBehindGateway<F> {
  const answeredWithText = async (request: ChatCompletionCreateParamsNonStreaming) => {
    setting.fake.enqueue({ fixture: 'google-text.json' });
    return setting.client.chat.completions.create(request);
  };
  // The gateway, fake and client are set in beforeAll, before any test reads them.
  const setting = {
    lastRequest() {
      const { path, body, headers } = setting.fake.requests.at(-1)!;
      return { path, body, headers };
    },
    answeredWithText,
    askedAboutImage: (url: string) =>
      answeredWithText({
        model: 'gemini-3-pro-preview',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      }),
    refusal: (client = setting.client) =>
      client.chat.completions
        .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e),
  } as GeminiBehindGateway<F>;
  beforeAll(async () => {
    setting.fake = await startFake();
    setting.gateway = await startGateway();
    setting.client = gatewayOpenAI(setting.gateway, target(setting.fake));
  });
  afterAll(async () => {
    await setting.gateway?.close();
    await setting.fake?.close();
  });
  return setting;
}
