/**
 * A stream cut mid-way is continued on the fallback. A target asked to continue may start the answer
 * over instead: the client must still get the answer exactly once (the repeated part skipped), or, when
 * the restart says something else than the client already has, an in-band error and no [DONE].
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream } from '../fakes/openai/server.js';
import { splitIntoPieces } from '../fakes/openai/request-text.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { openAIFakesForFile, rawChatStream, target, userMessage } from '../routing/support.js';

let gateway: TestGateway;
const fake = openAIFakesForFile();

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
});

const chat = { model: 'gpt-4o-mini', messages: userMessage('tell me a story') };

function config(primary: FakeUpstream, fallback: FakeUpstream) {
  return { strategy: { mode: 'fallback' }, targets: [target(primary), target(fallback)] };
}

describe.concurrent('a continuation that starts the answer over', () => {
  it('delivers the answer once: the repeated beginning is skipped, then [DONE]', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const pieces = splitIntoPieces('[primary] tell me a story', 60);
    const whole = pieces.join('');
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    // The fallback ignores the instruction to continue and says the whole answer again.
    fallback.enqueue({ text: whole });
    const result = await rawChatStream(gateway, config(primary, fallback), chat);
    expect(result.done).toBe(true);
    expect(result.text).toBe(whole);
  });

  it('ends with the in-band error and no [DONE] when the restart diverges from what was sent', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const pieces = splitIntoPieces('[primary] tell me a story', 60);
    const sent = pieces.slice(0, 39).join('');
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: `${sent.slice(0, 40)} but then something else entirely happened to them.` });
    const result = await rawChatStream(gateway, config(primary, fallback), chat);
    expect(result.done).toBe(false);
    expect(result.events.at(-1)).toMatchObject({ error: { code: 'upstream_invalid_response' } });
    expect(result.text).toBe(sent);
  });

  it('a real continuation that happens to begin like the answer is sent as it came', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const pieces = splitIntoPieces('[primary] tell me a story', 60);
    const sent = pieces.slice(0, 39).join('');
    const rest = `${sent.slice(0, 3)}… and that was the end.`;
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: rest });
    const result = await rawChatStream(gateway, config(primary, fallback), chat);
    expect(result.done).toBe(true);
    expect(result.text).toBe(sent + rest);
  });
});
