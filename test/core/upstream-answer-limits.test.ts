/**
 * A provider's answer to a model call is held only up to the gateway's bounds: a whole answer up to
 * GATEWAY_UPSTREAM_ANSWER_MAX_BYTES, one event of a stream up to GATEWAY_UPSTREAM_EVENT_MAX_BYTES. Past
 * them the attempt fails as the provider's (502 `upstream_invalid_response`, fallen back from), and the
 * provider's answer is closed rather than read on.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postChat, postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError, sleep } from './support.js';

const ANSWER_MAX = 8192;
const EVENT_MAX = 4096;
/** Chunks of 'long-stream': about 150 bytes each, some 30 KB in all. */
const LONG_WORDS = 200;

/** How the fake provider answers, by the first segment of its path (one custom host per behaviour). */
type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

/** Writes `piece` again and again until the gateway closes the connection. */
function writeUntilClosed(res: ServerResponse, piece: string): void {
  const write = () => {
    while (!res.destroyed && res.write(piece));
    if (!res.destroyed) res.once('drain', write);
  };
  write();
}

const closed: Record<string, boolean> = {};

function noteClose(name: string, res: ServerResponse): void {
  closed[name] = false;
  res.once('close', () => (closed[name] = true));
}

const chatAnswer = {
  id: 'chatcmpl-small',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'small' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-s',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

const behaviours: Record<string, Behaviour> = {
  // A JSON answer that never ends, sent without a length.
  endless(_req, res) {
    noteClose('endless', res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"chatcmpl-big","object":"chat.completion","choices":[{"index":0,"message":{"content":"');
    writeUntilClosed(res, 'x'.repeat(1024));
  },
  // A JSON answer whose Content-Length is past the bound; its body never comes.
  declared(_req, res) {
    noteClose('declared', res);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) });
    res.write('{');
  },
  // A failed answer that never ends.
  failing(_req, res) {
    noteClose('failing', res);
    res.writeHead(500, { 'content-type': 'application/json' });
    res.write('{"error":{"message":"');
    writeUntilClosed(res, 'e'.repeat(1024));
  },
  // A stream whose first event never ends.
  'endless-event'(_req, res) {
    noteClose('endless-event', res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"chatcmpl-s","choices":[{"index":0,"delta":{"content":"');
    writeUntilClosed(res, 'y'.repeat(1024));
  },
  // A stream with a first chunk, then an event past the bound.
  'late-event'(_req, res) {
    noteClose('late-event', res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'first' }, null));
    setTimeout(() => {
      res.write('data: ');
      writeUntilClosed(res, 'z'.repeat(1024));
    }, 50);
  },
  // A stream of small chunks that never ends, each well within the event bound.
  'many-events'(_req, res) {
    noteClose('many-events', res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    writeUntilClosed(res, chunk({ content: 'word ' }, null));
  },
  // A stream of LONG_WORDS small chunks, more than the whole-answer bound in all, then its end.
  'long-stream'(_req, res) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (let i = 0; i < LONG_WORDS; i++) res.write(chunk({ content: 'word ' }, null));
    res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
  },
  // An Anthropic stream of text that never ends: in JSON mode, text the gateway holds until the end.
  'anthropic-text'(_req, res) {
    noteClose('anthropic-text', res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (data: Record<string, unknown>) =>
      `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
    res.write(
      event({
        type: 'message_start',
        message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], usage: {} },
      }) + event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    );
    writeUntilClosed(
      res,
      event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word ' } }),
    );
  },
  // Answers within the bounds.
  small(req, res) {
    let body = '';
    req.on('data', (data: Buffer) => (body += data.toString()));
    req.on('end', () => {
      if ((JSON.parse(body) as { stream?: boolean }).stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          chunk({ role: 'assistant', content: 'small' }, null) + chunk({}, 'stop') + 'data: [DONE]\n\n',
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(chatAnswer));
    });
  },
};

let gateway: TestGateway;
let upstream: Server;
let base: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const name = (req.url ?? '').split('/')[1];
    const behaviour = behaviours[name];
    if (!behaviour) {
      res.writeHead(404).end();
      return;
    }
    if (name === 'small') behaviour(req, res);
    else {
      req.resume();
      behaviour(req, res);
    }
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = await startGateway({
    env: {
      GATEWAY_UPSTREAM_ANSWER_MAX_BYTES: String(ANSWER_MAX),
      GATEWAY_UPSTREAM_EVENT_MAX_BYTES: String(EVENT_MAX),
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

const target = (name: string) => ({ provider: 'openai', api_key: 'sk-test', custom_host: `${base}/${name}` });
const chat = (stream = false) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hi' }],
  ...(stream && { stream: true }),
});

async function expectRefused(response: Response, part: 'answer' | 'event' | 'stream'): Promise<string> {
  expect(response.status).toBe(502);
  expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
  const body = (await response.json()) as unknown;
  expectOpenAIError(body);
  expect(body.error.code).toBe('upstream_invalid_response');
  expect(body.error.message).toContain(
    part === 'answer'
      ? `larger than ${ANSWER_MAX} bytes`
      : part === 'event'
        ? `larger than ${EVENT_MAX} bytes`
        : `more than ${ANSWER_MAX} bytes`,
  );
  expect(body.error.message).toContain(
    part === 'event' ? 'GATEWAY_UPSTREAM_EVENT_MAX_BYTES' : 'GATEWAY_UPSTREAM_ANSWER_MAX_BYTES',
  );
  return body.error.message;
}

async function expectClosed(name: string): Promise<void> {
  for (let i = 0; i < 100 && !closed[name]; i++) await sleep(20);
  expect(closed[name], `the gateway closed ${name}'s answer`).toBe(true);
}

const signal = () => AbortSignal.timeout(10_000);

describe('a whole answer past GATEWAY_UPSTREAM_ANSWER_MAX_BYTES', () => {
  it('fails the call with 502 and closes the provider answer', async () => {
    const response = await postChat(gateway, target('endless'), chat(), {}, signal());
    await expectRefused(response, 'answer');
    await expectClosed('endless');
  });

  it('is refused at once when its Content-Length says so', async () => {
    const response = await postChat(gateway, target('declared'), chat(), {}, signal());
    await expectRefused(response, 'answer');
    await expectClosed('declared');
  });

  it('bounds a failed answer too', async () => {
    const response = await postChat(gateway, target('failing'), chat(), {}, signal());
    await expectRefused(response, 'answer');
    await expectClosed('failing');
  });

  it('bounds an embeddings answer', async () => {
    const response = await postWithConfig(
      gateway,
      '/embeddings',
      target('endless'),
      { model: 'text-embedding-3-small', input: 'hi' },
      {},
      signal(),
    );
    await expectRefused(response, 'answer');
  });

  it("is the target's failure: a fallback target answers", async () => {
    const config = { strategy: { mode: 'fallback' }, targets: [target('endless'), target('small')] };
    const response = await postChat(gateway, config, chat(), {}, signal());
    expect(response.status).toBe(200);
    expect(((await response.json()) as typeof chatAnswer).choices[0].message.content).toBe('small');
  });

  it('leaves answers within the bound alone', async () => {
    const response = await postChat(gateway, target('small'), chat(), {}, signal());
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject(chatAnswer);
  });
});

describe('a stream event past GATEWAY_UPSTREAM_EVENT_MAX_BYTES', () => {
  it('fails the call with 502 before the first chunk, and closes the provider stream', async () => {
    const response = await postChat(gateway, target('endless-event'), chat(true), {}, signal());
    await expectRefused(response, 'event');
    await expectClosed('endless-event');
  });

  it("is the target's failure: a fallback target answers the stream", async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target('endless-event'), target('small')],
    };
    const response = await postChat(gateway, config, chat(true), {}, signal());
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('small');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('ends a stream already under way with the in-band error', async () => {
    const response = await postChat(gateway, target('late-event'), chat(true), {}, signal());
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('first');
    expect(text).toContain('upstream_invalid_response');
    expect(text).toContain(`larger than ${EVENT_MAX} bytes`);
    expect(text).not.toContain('[DONE]');
    await expectClosed('late-event');
  });
});

describe('a stream longer than GATEWAY_UPSTREAM_ANSWER_MAX_BYTES', () => {
  const guarded = (name: string, deny: boolean) => ({
    ...target(name),
    output_guardrails: [
      { id: 'no-banana', deny, 'default.contains': { words: ['banana'], operator: 'none' } },
    ],
  });

  it('is relayed whole when nothing keeps it whole', async () => {
    const response = await postChat(gateway, target('long-stream'), chat(true), {}, signal());
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.length).toBeGreaterThan(ANSWER_MAX);
    expect(text.split('word ').length - 1).toBe(LONG_WORDS);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('fails with 502 when output checks that may deny hold it, and closes the provider stream', async () => {
    const response = await postChat(gateway, guarded('many-events', true), chat(true), {}, signal());
    await expectRefused(response, 'stream');
    await expectClosed('many-events');
  });

  it('is relayed until the bound, then ends with the in-band error, when output checks keep it', async () => {
    const response = await postChat(gateway, guarded('many-events', false), chat(true), {}, signal());
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('word ');
    expect(text).toContain('upstream_invalid_response');
    expect(text).toContain(`more than ${ANSWER_MAX} bytes`);
    expect(text).not.toContain('[DONE]');
    await expectClosed('many-events');
  });

  it('ends a Responses stream, whose response.completed carries the whole output, with response.failed', async () => {
    const groq = { ...target('many-events'), provider: 'groq' };
    const response = await postWithConfig(
      gateway,
      '/responses',
      groq,
      { model: 'llama-3.1-8b-instant', input: 'hi', stream: true },
      {},
      signal(),
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('response.output_text.delta');
    expect(text).toContain('event: response.failed');
    expect(text).toContain(`more than ${ANSWER_MAX} bytes`);
    expect(text).not.toContain('response.completed');
    await expectClosed('many-events');
  });
});

describe('a stream a provider translator holds whole', () => {
  it('is read up to GATEWAY_UPSTREAM_ANSWER_MAX_BYTES: Anthropic text in JSON mode', async () => {
    const anthropic = { provider: 'anthropic', api_key: 'sk-ant', custom_host: `${base}/anthropic-text` };
    const body = { ...chat(true), model: 'claude-haiku-4-5', response_format: { type: 'json_object' } };
    const response = await postChat(gateway, anthropic, body, {}, signal());
    // The role chunk went out; the text, held, never did.
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('word');
    expect(text).toContain('upstream_invalid_response');
    expect(text).toContain(`more than ${ANSWER_MAX} bytes`);
    expect(text).not.toContain('[DONE]');
    await expectClosed('anthropic-text');
  });
});
