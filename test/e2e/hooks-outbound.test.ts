/**
 * Checks that leave the process, end to end through the `openai` SDK: a webhook on a local server (the
 * HMAC signature verified, the timeout honoured under each fail mode, a refused address never called)
 * and a model-judged check whose judge is a fake provider reached through the gateway's own routing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/gateway/hooks/webhook-signature.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client as managementClient } from '../management/http.js';
import { client, logsOf, postChat, rawChatStream, target, traceHeaders } from '../routing/support.js';

const SECRET = 'whsec-test-0123456789';
/** The most of a webhook's answer the gateway reads: 1 MiB. */
const WEBHOOK_ANSWER_BOUND = 1024 * 1024;

interface Received {
  path: string;
  body: string;
  signature: string | undefined;
  authorization: string | undefined;
  closedEarly: boolean;
}

/** A webhook receiver: `/pass`, `/pass-with-data`, `/fail`, `/hang` (never answers until the caller leaves),
 * `/rewrite`, `/echo`, `/bound`, `/past-bound`. */
interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const entry: Received = {
        path: req.url ?? '',
        body: Buffer.concat(parts).toString('utf8'),
        signature: req.headers['x-gateway-signature'] as string | undefined,
        authorization: req.headers.authorization,
        closedEarly: false,
      };
      received.push(entry);
      if (entry.path === '/hang') {
        res.on('close', () => (entry.closedEarly = !res.writableEnded));
        return;
      }
      if (entry.path === '/bound' || entry.path === '/past-bound') {
        // A passing verdict padded to exactly the 1 MiB the gateway reads of an answer, or one byte past
        // it and then held open: only the gateway closing the request ends that one.
        const head = '{"verdict":true,"explanation":"';
        const answer = head + 'x'.repeat(WEBHOOK_ANSWER_BOUND - head.length - 2) + '"}';
        res.on('close', () => (entry.closedEarly = !res.writableEnded));
        res.writeHead(200, { 'content-type': 'application/json' });
        if (entry.path === '/bound') res.end(answer);
        else res.write(`${answer} `);
        return;
      }
      if (entry.path === '/rewrite') {
        // A webhook that rewrites, as the reference gateway's take it: the whole body under
        // transformedData.request.json (before the call) or transformedData.response.json (after it).
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ verdict: true, transformedData: rewritten(JSON.parse(entry.body)) }));
        return;
      }
      if (entry.path === '/echo') {
        // A webhook that writes into its rewrite what it was sent: its headers and the signing key it holds.
        const sent = JSON.parse(entry.body) as SentBody;
        const content = `deploy to ${String(req.headers['x-env'])} as ${entry.authorization} with ${SECRET}`;
        const messages = [{ role: 'user', content }];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            verdict: true,
            transformedData: { request: { json: { ...sent.request.json, messages } } },
          }),
        );
        return;
      }
      const valid =
        entry.signature !== undefined && verifyWebhookSignature(SECRET, entry.body, entry.signature);
      const verdict = valid && (entry.path === '/pass' || entry.path === '/pass-with-data');
      // `/pass-with-data` answers with data holding a credential-named key, which no record may keep.
      const data =
        entry.path === '/pass-with-data' ? { api_key: 'wh-secret-value', tier: 'gold' } : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ verdict, explanation: valid ? `said ${entry.path}` : 'bad signature', data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface SentBody {
  eventType: string;
  request: { json: { messages: Array<{ role: string; content: string }> } };
  response: { json: { choices: Array<{ message: { content: string } }> } } | null;
}

/** What `/rewrite` answers: the request's last message or the answer's text replaced, every other field
 * as sent, and `stream: false` and another model slipped in, which the gateway keeps as the client sent them. */
function rewritten(sent: SentBody): Record<string, unknown> {
  if (sent.eventType === 'beforeRequestHook') {
    const messages = sent.request.json.messages.map((message, i, all) =>
      i === all.length - 1 ? { ...message, content: 'rewritten by the webhook' } : message,
    );
    return { request: { json: { ...sent.request.json, messages, stream: false, model: 'other-model' } } };
  }
  const answer = sent.response!.json;
  const choices = answer.choices.map((choice) => ({
    ...choice,
    message: { ...choice.message, content: 'answer rewritten by the webhook' },
  }));
  return { request: { json: null }, response: { json: { ...answer, choices } } };
}

let gateway: TestGateway;
let fake: FakeUpstream;
let judgeFake: FakeUpstream;
let receiver: Receiver;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'hooked' });
  judgeFake = await startFakeOpenAI({ name: 'judge' });
  receiver = await startReceiver();
  gateway = await startGateway({ env: { GATEWAY_HOOKS_WEBHOOK_SECRET: SECRET } });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await judgeFake?.close();
  await receiver?.close();
});

const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

function webhookGuardrail(path: string, extra: Record<string, unknown> = {}, deny = true) {
  return {
    id: `hook${path.replace('/', '-')}`,
    deny,
    'default.webhook': {
      webhookURL: `${receiver.url}${path}`,
      headers: { authorization: 'Bearer receiver-token' },
      ...extra,
    },
  };
}

interface CheckBody {
  id: string;
  verdict: boolean;
  error: { message: string; timed_out: boolean } | null;
  on_error: string;
}
interface HookBody {
  id: string;
  verdict: boolean;
  checks: CheckBody[];
}
type Results = { before_request_hooks: HookBody[]; after_request_hooks: HookBody[] };

describe('default.webhook', () => {
  it('POSTs the request, HMAC-signed, and its verdict decides (pass: 200, fail with deny: 446)', async () => {
    const before = receiver.received.length;
    const { data, response } = await client(gateway, {
      ...target(fake),
      input_guardrails: [webhookGuardrail('/pass')],
    })
      .chat.completions.create(chat('check me'))
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[hooked] check me');
    const sent = receiver.received[before];
    expect(sent.path).toBe('/pass');
    expect(sent.authorization).toBe('Bearer receiver-token');
    expect(verifyWebhookSignature(SECRET, sent.body, sent.signature ?? '')).toBe(true);
    expect(JSON.parse(sent.body)).toMatchObject({
      event: 'beforeRequestHook',
      request: { text: 'check me' },
    });

    const calls = fake.requests.length;
    const error = await client(gateway, { ...target(fake), input_guardrails: [webhookGuardrail('/fail')] })
      .chat.completions.create(chat('check me'))
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);
  });

  it("names the hook's event eventType, as the reference gateway's webhooks read it, on both sides", async () => {
    const before = receiver.received.length;
    const config = {
      ...target(fake),
      input_guardrails: [webhookGuardrail('/pass')],
      output_guardrails: [webhookGuardrail('/pass')],
    };
    const response = await client(gateway, config).chat.completions.create(chat('which side')).withResponse();
    expect(response.response.status).toBe(200);
    const sent = receiver.received.slice(before).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(sent.map((body) => [body.eventType, body.event])).toEqual([
      ['beforeRequestHook', 'beforeRequestHook'],
      ['afterRequestHook', 'afterRequestHook'],
    ]);
  });

  it('a rewrite the webhook answers (transformedData) is what the provider gets and the client is given', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [webhookGuardrail('/rewrite', {}, false)],
      output_guardrails: [webhookGuardrail('/rewrite', {}, false)],
    };
    const { data, response } = await client(gateway, config)
      .chat.completions.create(chat('my secret plan'))
      .withResponse();
    expect(response.status).toBe(200);
    const asked = fake.requests.at(-1)?.body as { model: string; stream?: boolean; messages: unknown };
    expect(asked.messages).toEqual([{ role: 'user', content: 'rewritten by the webhook' }]);
    expect(asked.model).toBe('gpt-4o-mini');
    expect(data.choices[0].message.content).toBe('answer rewritten by the webhook');
    const results = (data as unknown as { hook_results: Results }).hook_results;
    expect(results.before_request_hooks[0]).toMatchObject({ transformed: true, verdict: true });
    expect(results.after_request_hooks[0]).toMatchObject({ transformed: true, verdict: true });

    // A streamed call stays a stream, whatever the rewrite says of `stream`.
    const stream = await client(gateway, config).chat.completions.create({
      ...chat('stream my secret'),
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[hooked] rewritten by the webhook');
    expect((fake.requests.at(-1)?.body as { stream?: boolean }).stream).toBe(true);

    // An output webhook's rewrite reaches a stream the gateway holds back (here: its hook may deny).
    const held = { ...target(fake), output_guardrails: [webhookGuardrail('/rewrite')] };
    const heldStream = await client(gateway, held).chat.completions.create({
      ...chat('stream my secret'),
      stream: true,
    });
    let heldText = '';
    for await (const chunk of heldStream) heldText += chunk.choices[0]?.delta?.content ?? '';
    expect(heldText).toBe('answer rewritten by the webhook');
  });

  it('a rewrite reaches the provider with the credentials it echoes masked, every other word as written', async () => {
    const headers = { authorization: 'Bearer receiver-token', 'x-env': 'production' };
    const config = { ...target(fake), input_guardrails: [webhookGuardrail('/echo', { headers }, false)] };
    const response = await postChat(gateway, config, chat('deploy'));
    expect(response.status).toBe(200);
    const asked = fake.requests.at(-1)?.body as { messages: unknown };
    expect(asked.messages).toEqual([
      { role: 'user', content: 'deploy to production as [REDACTED] with [REDACTED]' },
    ]);
  });

  it("records the results the answer carried, a credential in a check's data redacted in the record", async () => {
    const plainHook = { id: 'plain', 'default.wordCount': { minWords: 1 } };
    for (const [hooks, secret] of [
      [[plainHook], false],
      [[plainHook, webhookGuardrail('/pass-with-data')], true],
    ] as const) {
      const config = { ...target(fake), input_guardrails: hooks };
      const { traceId, headers } = traceHeaders();
      const response = await postChat(gateway, config, chat(`record me ${secret}`), headers);
      expect(response.status).toBe(200);
      const shown = ((await response.json()) as { hook_results: Results }).hook_results;
      const records = await logsOf(gateway, traceId, 1);
      const logged = records.find((record) => !record.is_attempt)?.hook_results as Results;
      if (!secret) {
        expect(logged).toEqual(shown);
        continue;
      }
      const data = (hook: HookBody) => (hook.checks[0] as unknown as { data: unknown }).data;
      expect(data(shown.before_request_hooks[1])).toEqual({ api_key: 'wh-secret-value', tier: 'gold' });
      expect(data(logged.before_request_hooks[1])).toEqual({ api_key: '[REDACTED]', tier: 'gold' });
      expect(JSON.stringify(records)).not.toContain('wh-secret-value');
    }
  });

  it('an answer-side webhook that fails withholds a streamed answer', async () => {
    const config = { ...target(fake), output_guardrails: [webhookGuardrail('/fail')] };
    const stream = await rawChatStream(gateway, config, chat('stream me'));
    expect(stream.status).toBe(446);
    expect(stream.text).toBe('');
    expect(JSON.stringify(stream.events)).not.toContain('stream me');
    const sent = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { response?: { text?: string } };
    expect(sent.response?.text).toBe('[hooked] stream me');
  });

  it('a webhook that does not answer in time counts as passed under on_error: pass', async () => {
    const { traceId, headers } = traceHeaders();
    const config = {
      ...target(fake),
      input_guardrails: [webhookGuardrail('/hang', { timeout: 200 })],
    };
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create(chat('slow check'))
      .withResponse();
    expect(response.status).toBe(200);
    const results = (data as unknown as { hook_results: Results }).hook_results;
    expect(results.before_request_hooks[0].checks[0]).toMatchObject({
      id: 'default.webhook',
      verdict: true,
      on_error: 'pass',
      error: { timed_out: true },
    });
    // The timed-out call was aborted, not left hanging.
    await expect
      .poll(() => receiver.received.filter((r) => r.path === '/hang').at(-1)?.closedEarly)
      .toBe(true);
    const records = await logsOf(gateway, traceId, 1);
    const record = records.find((r) => !r.is_attempt);
    expect((record?.hook_results as Results).before_request_hooks[0].checks[0].error?.timed_out).toBe(true);
  }, 20_000);

  it('a webhook that does not answer in time counts as failed under on_error: fail (446 with deny)', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [webhookGuardrail('/hang', { timeout: 200, on_error: 'fail' })],
    };
    const calls = fake.requests.length;
    const error = await client(gateway, config)
      .chat.completions.create({ ...chat('slow check'), stream: true })
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);
  }, 20_000);

  it('an answer of exactly 1 MiB is read whole; one byte more is an error and the request is closed', async () => {
    const bound = await postChat(
      gateway,
      { ...target(fake), input_guardrails: [webhookGuardrail('/bound', { on_error: 'fail' })] },
      chat('a large verdict'),
    );
    expect(bound.status).toBe(200);
    const past = await postChat(
      gateway,
      { ...target(fake), input_guardrails: [webhookGuardrail('/past-bound', { on_error: 'fail' })] },
      chat('a verdict too large'),
    );
    const body = (await past.json()) as { hook_results: Results };
    expect(past.status).toBe(446);
    const result = body.hook_results.before_request_hooks[0].checks[0];
    expect(result.verdict).toBe(false);
    expect(result.error).toMatchObject({
      message: 'The webhook answered with more than 1 MiB',
      timed_out: false,
    });
    await expect
      .poll(() => receiver.received.filter((r) => r.path === '/past-bound').at(-1)?.closedEarly)
      .toBe(true);
  });

  it('a refused address is never called: the check errs, and its on_error decides', async () => {
    const before = receiver.received.length;
    const config = {
      ...target(fake),
      input_guardrails: [
        {
          id: 'metadata',
          deny: true,
          'default.webhook': { webhookURL: 'http://169.254.169.254/latest/meta-data/', on_error: 'fail' },
        },
      ],
    };
    const response = await postChat(gateway, config, chat('hi'));
    const body = (await response.json()) as { hook_results: Results };
    expect(response.status).toBe(446);
    const result = body.hook_results.before_request_hooks[0].checks[0];
    expect(result.verdict).toBe(false);
    expect(result.error?.message).toMatch(/metadata|refused/);
    expect(receiver.received.length).toBe(before);
  });
});

describe('default.modelJudge', () => {
  it('asks a judge model through the gateway routing; its verdict decides', async () => {
    const admin = managementClient(gateway.url, gateway.adminKey);
    const judgeConfig = { ...target(judgeFake), override_params: { model: 'judge-model' } };
    expect((await admin.post('/configs', { slug: 'judge-cfg', config: judgeConfig })).status).toBe(200);
    const config = {
      ...target(fake),
      output_guardrails: [
        {
          id: 'judged',
          deny: true,
          'default.modelJudge': { config: 'judge-cfg', instructions: 'Be polite.' },
        },
      ],
    };

    judgeFake.enqueue({ text: '{"verdict": true, "explanation": "polite enough"}' });
    const { data, response } = await client(gateway, config)
      .chat.completions.create(chat('thank you'))
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[hooked] thank you');
    const asked = judgeFake.requests.at(-1)?.body as { model: string; messages: Array<{ content: string }> };
    expect(asked.model).toBe('judge-model');
    expect(asked.messages[0].content).toContain('Be polite.');
    expect(asked.messages[1].content).toContain('[hooked] thank you');

    judgeFake.enqueue({ text: '{"verdict": false, "explanation": "rude"}' });
    const error = await client(gateway, config)
      .chat.completions.create(chat('thank you'))
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(446);
  });
});
