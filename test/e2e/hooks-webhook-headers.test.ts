/**
 * A webhook header value with a character HTTP cannot carry beyond Latin-1 (a token pasted with typographic
 * quotes, “…”) is refused with the config, naming the header and never its value: accepted, every call of
 * the check failed before it was sent, which counts as a pass by default, so the guard was silently off.
 * A webhook URL carrying credentials, which the gateway never sends, is refused the same way, and a log
 * URL the address policy refuses is named by its own field. fetch against a real gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'headers' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const TOKEN = 'Bearer \u201csk-hook-secret\u201d';
const guarded = (headers: Record<string, string>) => ({
  ...target(fake),
  input_guardrails: [
    { id: 'hook', deny: true, 'default.webhook': { webhookURL: 'http://127.0.0.1:9/check', headers } },
  ],
});
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** A chat call under `config`, sent in the header as JSON with its characters beyond ASCII escaped (a
 * header carries bytes; JSON's \u escapes carry any character). */
function chatUnder(config: Record<string, unknown>): Promise<Response> {
  const json = JSON.stringify(config).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': json,
    },
    body: JSON.stringify(ask),
  });
}

describe('webhook header values', () => {
  it('one beyond Latin-1 is a 400 naming the header, without its value; nothing is called', async () => {
    const calls = fake.requests.length;
    const response = await chatUnder(guarded({ Authorization: TOKEN }));
    const text = await response.text();
    expect(response.status, text).toBe(400);
    const { error } = JSON.parse(text) as { error: { param: string; message: string } };
    expect(error.param).toMatch(/headers\.Authorization$/);
    expect(text).not.toContain('sk-hook-secret');
    expect(fake.requests.length).toBe(calls);
  });

  it('a stored config holding one is refused too', async () => {
    const response = await fetch(`${gateway.url}/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ slug: 'quoted-token', config: guarded({ Authorization: TOKEN }) }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(400);
    expect(text).not.toContain('sk-hook-secret');
  });

  it('Latin-1 letters and tabs, which HTTP carries, are accepted', async () => {
    const config = guarded({ 'X-Team': 'caf\u00e9\tteam' });
    // The webhook's address answers nothing: the check errs, and passes (on_error: pass).
    const response = await chatUnder(config);
    expect(response.status, await response.text()).toBe(200);
  });
});

describe('webhook URLs', () => {
  it('one carrying credentials (user:password@) is a 400 naming it, without them; nothing is called', async () => {
    const calls = fake.requests.length;
    const config = {
      ...target(fake),
      input_guardrails: [
        {
          id: 'hook',
          deny: true,
          'default.webhook': { webhookURL: 'https://guard:pw-hook-secret@guard.example.com/check' },
        },
      ],
    };
    const response = await chatUnder(config);
    const text = await response.text();
    expect(response.status, text).toBe(400);
    const { error } = JSON.parse(text) as { error: { param: string } };
    expect(error.param).toMatch(/webhookURL$/);
    expect(text).not.toContain('pw-hook-secret');
    expect(fake.requests.length).toBe(calls);
  });
});

describe('a log URL the address policy refuses', () => {
  it("is named as the log check's own field in the check's error", async () => {
    const config = {
      ...target(fake),
      output_guardrails: [
        {
          id: 'audit',
          deny: true,
          'default.log': { logURL: 'http://169.254.169.254/collect', on_error: 'fail' },
        },
      ],
    };
    const response = await chatUnder(config);
    const body = (await response.json()) as {
      hook_results: { after_request_hooks: Array<{ checks: Array<{ error: { message: string } | null }> }> };
    };
    expect(response.status).toBe(446);
    const message = body.hook_results.after_request_hooks[0].checks[0].error?.message;
    expect(message).toMatch(/^logURL /);
  });
});
