// The bench's own upstream: as little work per request as possible, so what is measured is the thing
// in front of it. Latency per request comes from the model name (`bench-lat-20` waits 20 ms), which
// every proxy forwards untouched, so one process serves every scenario. The wait counts from the
// request's arrival, and `GET /__fake/service-time` reports (and starts over) how long the answers
// really took: a "20 ms" upstream that answers in 22 ms caps a concurrency at 10% less than it should.
// Run as a child process; it prints `READY <port>` when listening.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './exit-with-parent.js';
import { createServiceClock } from './fake-service-clock.js';

const defaultLatencyMs = Number(process.env.LATENCY_MS ?? 0);
const streamChunks = Number(process.env.STREAM_CHUNKS ?? 5);
const streamGapMs = Number(process.env.STREAM_GAP_MS ?? 1);
const FINGERPRINT = 'fp_bench0001';

const serviceTime = createServiceClock();

const replyCache = new Map<string, Buffer>();
const streamCache = new Map<string, string[]>();

// Real-sized answers, shaped like OpenAI's, built once per model: the fake must not be the bottleneck.
function reply(model: string): Buffer {
  let body = replyCache.get(model);
  if (!body) {
    body = Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-BenchBenchBenchBenchBenchBench1',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Hello from the bench upstream.',
              refusal: null,
              annotations: [],
            },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: 9,
          completion_tokens: 6,
          total_tokens: 15,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 0,
            audio_tokens: 0,
            accepted_prediction_tokens: 0,
            rejected_prediction_tokens: 0,
          },
        },
        service_tier: 'default',
        system_fingerprint: FINGERPRINT,
      }),
    );
    replyCache.set(model, body);
  }
  return body;
}

function frames(model: string): string[] {
  let list = streamCache.get(model);
  if (!list) {
    const base = {
      id: 'chatcmpl-BenchBenchBenchBenchBenchBench2',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: FINGERPRINT,
    };
    const chunk = (delta: object, finish: string | null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    });
    const events: object[] = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
    for (let i = 0; i < streamChunks; i++) events.push(chunk({ content: ` word${i}` }, null));
    events.push(chunk({}, 'stop'));
    events.push({
      ...base,
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: streamChunks, total_tokens: 9 + streamChunks },
    });
    list = [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'];
    streamCache.set(model, list);
  }
  return list;
}

function latencyOf(model: string): number {
  const match = /^bench-lat-(\d+)$/.exec(model);
  return match ? Number(match[1]) : defaultLatencyMs;
}

function sendStream(res: ServerResponse, list: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  // The first event goes out with the headers; the rest follow with small gaps, so time to first
  // byte is told apart from the time of the whole stream.
  res.write(list[0]);
  let i = 1;
  const timer = setInterval(() => {
    if (res.destroyed || i >= list.length) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(list[i++]);
  }, streamGapMs);
}

const server = createServer((req, res) => {
  const arrivedAt = performance.now();
  if (req.method === 'GET' && req.url === '/__fake/service-time') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(serviceTime.report()));
    return;
  }
  // Besides that report, only the one route: a proxy that rewrites the path wrongly must fail the bench's check, not pass it.
  if (req.method !== 'POST' || !(req.url ?? '').endsWith('/v1/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      `{"error":{"message":"no route ${req.method} ${req.url}","type":"invalid_request_error","param":null,"code":null}}`,
    );
    req.resume();
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    let model = 'bench-model';
    let stream = false;
    if (parts.length > 0) {
      try {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
          model?: unknown;
          stream?: unknown;
        };
        if (typeof body.model === 'string') model = body.model;
        stream = body.stream === true;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          '{"error":{"message":"invalid JSON","type":"invalid_request_error","param":null,"code":null}}',
        );
        return;
      }
    }
    const respond = () => {
      if (stream) return sendStream(res, frames(model));
      const body = reply(model);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    };
    const latency = latencyOf(model);
    if (latency === 0) return respond();
    serviceTime.wait(arrivedAt + latency, () => {
      respond();
      serviceTime.record(performance.now() - arrivedAt);
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`READY ${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
exitWithParent();
