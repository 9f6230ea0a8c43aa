// `npx tsx bench/batch.ts [--lines 10000] [--concurrency 16] [--latency-ms 20]`: one managed batch
// against the bench's fake upstream (`bench-lat-<ms>` answers after that many milliseconds), the gateway
// and the fake each in a process of its own. Reports the line rate against the rate the concurrency
// allows (concurrency / latency), against the rate of the same requests sent straight to the fake at the
// same concurrency (what this machine manages without the gateway), and the gateway's peak RSS. Runs the sources through tsx unless
// `--entry dist/main.js` names a build.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseNodeArgs } from 'node:util';
import { Pool } from 'undici';
import { freePort } from '../test/helpers/free-port.js';
import { compileChildren } from './compile-children.js';
import type { ServiceTimeReport } from './fake-service-clock.js';
import {
  cpuTimeMs,
  guardChildren,
  peakRssMB,
  startNodeServer,
  startScript,
  type Child,
} from './processes.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');
const HARD_LIMIT_MS = 600_000;

const { values } = parseNodeArgs({
  options: {
    lines: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '16' },
    'latency-ms': { type: 'string', default: '20' },
    entry: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const lines = Number(values.lines);
const concurrency = Number(values.concurrency);
const latencyMs = Number(values['latency-ms']);

async function main(): Promise<void> {
  const children: Child[] = [];
  const release = guardChildren(children, HARD_LIMIT_MS);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-bench-batch-'));
  const tsx = { NODE_OPTIONS: `--import tsx ${process.env.GATEWAY_NODE_OPTIONS ?? ''}`.trim() };
  try {
    const childDir = compileChildren(benchDir, repoRoot);
    const fake = await startScript(path.join(childDir, 'fake-upstream.js'), { PORT: '0' });
    children.push(fake);
    const port = await freePort();
    const adminKey = `gw-bench-${randomBytes(12).toString('hex')}`;
    const entry = values.entry ? path.resolve(values.entry) : path.join(repoRoot, 'src/main.ts');
    const gateway = await startNodeServer(
      entry,
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_KEY: adminKey,
        LOG_LEVEL: 'warn',
        GATEWAY_BATCH_CONCURRENCY: String(concurrency),
        GATEWAY_BATCH_NODE_CONCURRENCY: String(concurrency),
        GATEWAY_BATCH_POLL_MS: '100',
        ...(values.entry ? {} : tsx),
      },
      port,
      values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : [],
    );
    children.push(gateway);
    const origin = `http://127.0.0.1:${port}`;
    const headers = {
      'x-gateway-api-key': adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': `http://127.0.0.1:${fake.port}/v1`,
      authorization: 'Bearer sk-bench',
    };

    const fakeOrigin = `http://127.0.0.1:${fake.port}`;
    const fakeServiceTime = async () =>
      (await (await fetch(`${fakeOrigin}/__fake/service-time`)).json()) as ServiceTimeReport;
    const model = `bench-lat-${latencyMs}`;
    const input = Array.from({ length: lines }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model, messages: [{ role: 'user', content: `Say something about the number ${i}.` }] },
      }),
    ).join('\n');
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([input]), 'bench.jsonl');
    const file = (await (
      await fetch(`${origin}/v1/files`, { method: 'POST', headers, body: form })
    ).json()) as {
      id: string;
    };

    await fakeServiceTime();
    const started = performance.now();
    const created = await fetch(`${origin}/v1/batches`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: 'immediate',
      }),
    });
    const { id } = (await created.json()) as { id: string };
    let runningAt: number | undefined;
    let cpuAtRun: number | undefined;
    let batch: { status: string; request_counts: { completed: number; failed: number } };
    for (;;) {
      batch = (await (await fetch(`${origin}/v1/batches/${id}`, { headers })).json()) as typeof batch;
      if (runningAt === undefined && batch.status !== 'validating') {
        runningAt = performance.now();
        cpuAtRun = cpuTimeMs(gateway.pid);
      }
      if (['completed', 'failed', 'cancelled', 'expired'].includes(batch.status)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ended = performance.now();
    const cpuAtEnd = cpuTimeMs(gateway.pid);
    const cpuPerLine =
      cpuAtRun !== undefined && cpuAtEnd !== undefined ? (cpuAtEnd - cpuAtRun) / lines : undefined;
    const runSeconds = (ended - (runningAt ?? started)) / 1000;
    const rate = lines / runSeconds;
    const batchServiceTime = await fakeServiceTime();
    const direct = await directRate(fakeOrigin, model);
    const directServiceTime = await fakeServiceTime();
    const allowed = concurrency / (latencyMs / 1000);
    const rss = peakRssMB(gateway.pid);
    console.log(
      JSON.stringify(
        {
          lines,
          concurrency,
          upstream_latency_ms: latencyMs,
          status: batch.status,
          request_counts: batch.request_counts,
          validation_s: Math.round(((runningAt ?? started) - started) / 10) / 100,
          run_s: Math.round(runSeconds * 100) / 100,
          lines_per_s: Math.round(rate),
          allowed_lines_per_s: Math.round(allowed),
          of_allowed: `${Math.round((rate / allowed) * 100)}%`,
          direct_lines_per_s: Math.round(direct),
          of_direct: `${Math.round((rate / direct) * 100)}%`,
          fake_service_ms: { batch: batchServiceTime, direct: directServiceTime },
          gateway_cpu_ms_per_line: cpuPerLine === undefined ? null : Math.round(cpuPerLine * 1000) / 1000,
          gateway_peak_rss_mb: rss,
          load_average: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    release();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The same requests sent straight to the fake upstream, `concurrency` at a time, after the batch: the
 * rate this machine gives without the gateway, so a loaded machine shows as such. */
async function directRate(origin: string, model: string): Promise<number> {
  const pool = new Pool(origin, { connections: concurrency });
  const count = Math.min(lines, 4000);
  let next = 0;
  const send = async () => {
    while (next < count) {
      const i = next++;
      const response = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content: `Say something about the number ${i}.` }],
        }),
      });
      await response.body.text();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, send));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return count / seconds;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
