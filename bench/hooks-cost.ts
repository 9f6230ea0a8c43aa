/**
 * What the three deterministic checks of docs/benchmarks.md ("Hooks: three deterministic checks") cost
 * per request, in-process: the allocation, which the host's load does not change, so a change to the hook
 * machinery can be judged without the noise the main bench's throughput carries; and the CPU, which it
 * does (alternate runs of two builds to compare them).
 *
 * The gateway runs in this process (fresh SQLite data dir, bodies logged as by default) in front of the
 * bench's fake upstream (its own process, 0 ms). Rounds alternate the plain config and the checks' config,
 * each sending the same chat request over an undici pool of C connections, C requests in flight:
 * - **CPU**: `process.cpuUsage()` (all threads: the log writer's too) per request, over blocks of 200
 *   requests of each config in turn, so that a change in the host's load hits both alike; the added CPU is
 *   the median of the pairs' differences, with their quartiles to show the spread;
 * - **allocation**: V8's sampling heap profiler, counting the objects that minor and major GCs collected,
 *   over N requests per round; bytes per request, and the part allocated by the hook modules' own
 *   functions.
 * The client shares the process, so absolute figures include it; the difference between the configs is
 * the figure to read.
 *
 * `npx tsx bench/hooks-cost.ts [requests] [rounds] [connections]` (defaults 4,000, 3, 8): rounds × requests
 * of each config for the CPU, then as many for the allocation. Prints one JSON object of medians.
 */
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { compileChildren } from './compile-children.js';
import { startScript } from './processes.js';
import { round } from './stats.js';
import { chatBody } from './target.js';
import { startInProcessGateway } from './in-process-gateway.js';

const REQUESTS = Number(process.argv[2] ?? 4_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const CONNECTIONS = Number(process.argv[4] ?? 8);
const CPU_BLOCK = 200;
const SAMPLING_INTERVAL_BYTES = 1024;
const HOOK_MODULES = /\/src\/(gateway\/)?hooks\//;

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

const PLAIN = { provider: 'openai', api_key: 'sk-bench', custom_host: '{{UPSTREAM}}' };
const CHECKS = {
  ...PLAIN,
  input_guardrails: [
    {
      id: 'in',
      deny: true,
      'default.contains': { words: ['DROP TABLE'], operator: 'none' },
      'default.characterCount': { minCharacters: 1, maxCharacters: 100000 },
    },
  ],
  output_guardrails: [{ id: 'out', 'default.wordCount': { minWords: 1, maxWords: 100000 } }],
};

/** A node of V8's sampling heap profile (the fields read here). */
interface ProfileNode {
  callFrame: { url: string };
  selfSize: number;
  children: ProfileNode[];
}

interface Sent {
  send(count: number): Promise<void>;
}

function sender(pool: Pool, headers: Record<string, string>): Sent {
  const body = chatBody(0);
  const once = async () => {
    const answer = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`${answer.statusCode} ${text.slice(0, 300)}`);
  };
  return {
    async send(count) {
      let left = count;
      const lane = async () => {
        while (left-- > 0) await once();
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, lane));
    },
  };
}

/**
 * Estimated bytes allocated in the tree, and by the hook modules' own functions (src/hooks/,
 * src/gateway/hooks/). V8 counts an inlined function's allocations as its caller's, so the second figure is
 * approximate; the total is not.
 */
function allocated(root: ProfileNode): { total: number; hooks: number } {
  let total = 0;
  let hooks = 0;
  const walk = (node: ProfileNode) => {
    total += node.selfSize;
    if (HOOK_MODULES.test(node.callFrame.url)) hooks += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(root);
  return { total, hooks };
}

async function cpuPerRequestUs(requests: Sent, count: number): Promise<number> {
  const before = process.cpuUsage();
  await requests.send(count);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

async function bytesPerRequest(session: Session, requests: Sent) {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await requests.send(REQUESTS);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  const bytes = allocated(profile.head);
  return { total: bytes.total / REQUESTS, hooks: bytes.hooks / REQUESTS };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const median = (values: number[]) => quantile(values, 0.5);

async function main(): Promise<void> {
  const childDir = compileChildren(benchDir, repoRoot);
  const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {});
  const upstreamUrl = `http://127.0.0.1:${upstream.port}/v1`;
  const { server, adminKey, stop } = await startInProcessGateway('hooks-cost');
  const session = new Session();
  session.connect();
  try {
    const origin = await server.listen();
    const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
    const headersOf = (config: object) => ({
      'content-type': 'application/json',
      'x-gateway-api-key': adminKey,
      authorization: 'Bearer sk-bench',
      'x-gateway-config': JSON.stringify(config).replaceAll('{{UPSTREAM}}', upstreamUrl),
    });
    const configs = { plain: sender(pool, headersOf(PLAIN)), checks: sender(pool, headersOf(CHECKS)) };
    for (const requests of Object.values(configs)) await requests.send(REQUESTS / 2);

    const cpu = { plain: [] as number[], checks: [] as number[], added: [] as number[] };
    for (let sent = 0; sent < ROUNDS * REQUESTS; sent += CPU_BLOCK) {
      const plain = await cpuPerRequestUs(configs.plain, CPU_BLOCK);
      const checks = await cpuPerRequestUs(configs.checks, CPU_BLOCK);
      cpu.plain.push(plain);
      cpu.checks.push(checks);
      cpu.added.push(checks - plain);
    }
    const bytes = { plain: [] as number[], checks: [] as number[], hooks: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      bytes.plain.push((await bytesPerRequest(session, configs.plain)).total);
      const checks = await bytesPerRequest(session, configs.checks);
      bytes.checks.push(checks.total);
      bytes.hooks.push(checks.hooks);
    }
    await pool.close();
    console.log(
      JSON.stringify({
        requests: REQUESTS,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        cpu_us_per_request: {
          plain: round(median(cpu.plain), 1),
          checks: round(median(cpu.checks), 1),
          added: round(median(cpu.added), 1),
          added_quartiles: [round(quantile(cpu.added, 0.25), 1), round(quantile(cpu.added, 0.75), 1)],
        },
        bytes_per_request: {
          plain: Math.round(median(bytes.plain)),
          checks: Math.round(median(bytes.checks)),
          added: Math.round(median(bytes.checks) - median(bytes.plain)),
          checks_in_hook_modules: Math.round(median(bytes.hooks)),
        },
        node: process.version,
      }),
    );
  } finally {
    session.disconnect();
    await stop();
    await upstream.stop();
  }
}

await main();
