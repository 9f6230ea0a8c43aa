// The floor under any JSON gateway, one step above the bare proxy: the request body is parsed as JSON and
// serialised again for the upstream (through undici's pool), and the answer is read whole before it is
// sent, as a gateway must to read its usage. `FRAMEWORK=fastify` serves the same from a Fastify route
// (Fastify's body parsing and reply), to tell what the framework costs. Nothing else by default: no keys, no
// config, no records. Prints `READY <port>`; UPSTREAM is the upstream origin. Used by bench/compare.ts
// (`--a forward`, `--a fastify-forward`, `--a fastify-recorded`).
//
// `RECORDS_DIR=<dir>` adds the one thing every call of the gateway also does: a log record of the
// gateway's shape (both bodies, the answer's usage), handed to the gateway's own log writer and store (an
// embedded SQLite store in that folder, with its migrations, log thread and rollups; `GATEWAY_DIST` names
// the built gateway, dist/ by default). With FRAMEWORK=fastify it is `--a fastify-recorded`: what it costs
// on top of the Fastify forward is the floor of a gateway that records every call. `RECORDS_FORMAT=ndjson`
// appends the same rows to a file instead of a database (see ndjsonStore).
import Fastify from 'fastify';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { exitWithParent } from './exit-with-parent.js';

const pool = new Pool(process.env.UPSTREAM ?? 'http://127.0.0.1:8080', { connections: 1024 });

type RecordCall = (
  requestText: string,
  body: unknown,
  status: number,
  answer: string,
  startedAt: number,
) => void;
const record: RecordCall | undefined = process.env.RECORDS_DIR
  ? await recorder(process.env.RECORDS_DIR)
  : undefined;

async function recorder(dataDir: string): Promise<RecordCall> {
  const dist = process.env.GATEWAY_DIST ?? new URL('../../../dist/', import.meta.url).pathname;
  const { openStore } = await import(`${dist}/store/index.js`);
  const { SerializedJson } = await import(`${dist}/store/serialized-json.js`);
  const { createLogWriter } = await import(`${dist}/observability/log-writer.js`);
  const { newTraceId, newSpanId } = await import(`${dist}/gateway/context.js`);
  const { sequentialId } = await import(`${dist}/gateway/ids.js`);
  const store =
    process.env.RECORDS_FORMAT === 'ndjson'
      ? await ndjsonStore(dist, dataDir)
      : await openStore({ dataDir, masterKey: Buffer.alloc(32, 7) });
  const quiet = { error: () => {}, warn: () => {}, info: () => {} };
  const writer = createLogWriter(store, quiet as never, { batchSize: 500, flushIntervalMs: 20 });
  return (requestText, body, status, answer, startedAt) => {
    const now = Date.now();
    let usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | undefined;
    try {
      usage = (JSON.parse(answer) as { usage?: typeof usage }).usage;
    } catch {
      usage = undefined;
    }
    writer.enqueue({
      id: `log_${sequentialId()}`,
      created_at_ms: now,
      organisation_id: 'org_bench',
      workspace_id: 'ws_bench',
      api_key_id: 'key_bench',
      trace_id: newTraceId(now),
      span_id: newSpanId(),
      parent_span_id: null,
      span_name: null,
      method: 'POST',
      path: '/v1/chat/completions',
      endpoint: 'chat',
      provider: 'openai',
      model: (body as { model?: string }).model ?? null,
      target: null,
      status,
      is_attempt: false,
      stream: false,
      latency_ms: performance.now() - startedAt,
      ttfb_ms: null,
      prompt_tokens: usage?.prompt_tokens ?? null,
      completion_tokens: usage?.completion_tokens ?? null,
      total_tokens: usage?.total_tokens ?? null,
      cached_tokens: null,
      reasoning_tokens: null,
      cost: null,
      cache_status: null,
      cache_similarity: null,
      retry_count: 0,
      error_code: null,
      error_message: null,
      metadata: {},
      request_body: new SerializedJson(requestText),
      response_body: new SerializedJson(answer),
      hook_results: null,
      prompt_id: null,
      prompt_version: null,
    });
  };
}

/**
 * `RECORDS_FORMAT=ndjson`: the records take the same way to a worker thread (the store's row values,
 * posted in the writer's batches) and are appended to `<dir>/logs.ndjson`, one JSON line a row, one write
 * a batch: what a record costs with no database under it.
 */
async function ndjsonStore(
  dist: string,
  dataDir: string,
): Promise<{ insertLogs(records: unknown[]): Promise<void> }> {
  const { startWorker } = await import(`${dist}/store/worker-heap.js`);
  const { toLogValues } = await import(`${dist}/store/rows.js`);
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { openSync, writeSync } = require('node:fs');
    const fd = openSync(workerData.file, 'a');
    parentPort.on('message', ({ id, rows }) => {
      let text = '';
      for (const row of rows) text += JSON.stringify(row) + '\\n';
      writeSync(fd, text);
      parentPort.postMessage(id);
    });`;
  const worker = startWorker(source, {
    eval: true,
    workerData: { file: `${dataDir}/logs.ndjson` },
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  worker.unref();
  const written = new Map<number, () => void>();
  let nextId = 0;
  worker.on('message', (id: number) => {
    written.get(id)?.();
    written.delete(id);
  });
  return {
    insertLogs: (records) =>
      new Promise<void>((resolve) => {
        const id = nextId++;
        written.set(id, resolve);
        worker.postMessage({ id, rows: records.map(toLogValues) });
      }),
  };
}

async function forward(
  path: string,
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const authorization = headers.authorization;
  const { statusCode, body: answer } = await pool.request({
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json',
      ...(typeof authorization === 'string' && { authorization }),
    },
    body: JSON.stringify(body),
  });
  return { status: statusCode, text: await answer.text() };
}

const port = Number(process.env.PORT ?? 0);
const ready = (address: AddressInfo) => console.log(`READY ${address.port}`);

if (process.env.FRAMEWORK === 'fastify') {
  const app = Fastify({ logger: false });
  if (record) {
    // The request's own text, for its record, as the gateway keeps it (no second serialisation).
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
      (request as unknown as { bodyText: string }).bodyText = text as string;
      parseJson(request, text as string, done);
    });
  }
  app.post('/*', async (request, reply) => {
    const startedAt = performance.now();
    const { status, text } = await forward(request.url, request.headers, request.body);
    record?.((request as unknown as { bodyText: string }).bodyText, request.body, status, text, startedAt);
    return reply.code(status).header('content-type', 'application/json').send(text);
  });
  await app.listen({ port, host: '127.0.0.1' });
  ready(app.server.address() as AddressInfo);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
} else {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const startedAt = performance.now();
      const requestText = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(requestText);
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('the body is not JSON');
        return;
      }
      forward(req.url ?? '/', req.headers, body).then(
        ({ status, text }) => {
          record?.(requestText, body, status, text, startedAt);
          res.writeHead(status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          });
          res.end(text);
        },
        (err: Error) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(err.message);
        },
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', () => ready(server.address() as AddressInfo));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
exitWithParent();
