/**
 * Where the gateway's allocation per request comes from: the figure that both its garbage collection
 * and its peak RSS at saturation hang on (docs/benchmarks.md, "Saturation mode").
 *
 * The gateway runs in this process (bench/in-process-gateway.ts, fresh SQLite data dir, settings as by
 * default) in front of the bench's fake upstream (its own process, 0 ms), routed as the saturation mode
 * routes it (`x-gateway-provider` and `x-gateway-custom-host`). The client is a worker thread with its own
 * V8 isolate, so V8's sampling heap profiler, counting the objects that minor and major GCs collected,
 * sees the gateway's allocations alone (the log writer's thread is another isolate and is not counted).
 * Prints bytes per request, and the functions and modules that allocate most of it by their own code
 * (V8 counts an inlined function's allocations as its caller's).
 *
 * `npx tsx bench/allocation.ts [--requests 20000] [--connections 64] [--top 25] [--traces] [--env NAME=value]...
 * [--survivors] [--latency-ms 0]`: a warm-up of as many requests, then the sampled ones. `--traces`: every
 * call traced, to an OTLP receiver that runs in the client's thread (so its allocations are not counted
 * either); `--env`: other settings. `--survivors`: only what outlived a young-generation collection (what
 * is promoted to the old generation and grows it between full collections); with `--latency-ms 20` and
 * `--connections 512` requests wait on the upstream as at saturation, so their objects live through
 * scavenges as they do there.
 * Runs from the sources (tsx), so a module reads as `src/…`.
 */
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { compileChildren } from './compile-children.js';
import { startScript } from './processes.js';
import { round } from './stats.js';
import { chatBody } from './target.js';
import { startInProcessGateway } from './in-process-gateway.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '64' },
    top: { type: 'string', default: '25' },
    traces: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    survivors: { type: 'boolean', default: false },
    'latency-ms': { type: 'string', default: '0' },
  },
});
function wholeNumber(name: 'requests' | 'connections' | 'top'): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a whole number ≥ 1`);
  return n;
}
const REQUESTS = wholeNumber('requests');
const CONNECTIONS = wholeNumber('connections');
const TOP = wholeNumber('top');
const SAMPLING_INTERVAL_BYTES = 512;
const LATENCY_MS = Number(values['latency-ms']);
if (!Number.isInteger(LATENCY_MS) || LATENCY_MS < 0) throw new Error('--latency-ms takes a whole number ≥ 0');

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

/** A node of V8's sampling heap profile (the fields read here). */
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

// The client: `count` requests over `connections` lanes, each answer read whole and checked. It also
// serves the OTLP receiver, which accepts every export; its port is the thread's first message.
const CLIENT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createServer } = require('node:http');
const { Pool } = require(workerData.undici);
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
receiver.listen(0, '127.0.0.1', () => parentPort.postMessage({ receiverPort: receiver.address().port }));
let pool;
parentPort.on('message', async ({ origin, headers, count }) => {
  if (origin !== undefined) {
    pool = new Pool(origin, { connections: workerData.connections, pipelining: 1 });
    workerData.headers = headers;
    return;
  }
  let left = count;
  let failure;
  const lane = async () => {
    while (left-- > 0 && failure === undefined) {
      const answer = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: workerData.headers, body: workerData.body });
      const text = await answer.body.text();
      if (answer.statusCode !== 200) failure = answer.statusCode + ' ' + text.slice(0, 300);
    }
  };
  await Promise.all(Array.from({ length: workerData.connections }, lane));
  parentPort.postMessage({ failure });
});
`;

async function startClient() {
  const worker = new Worker(CLIENT_SOURCE, {
    eval: true,
    workerData: {
      undici: createRequire(import.meta.url).resolve('undici'),
      body: chatBody(0),
      connections: CONNECTIONS,
    },
  });
  const { receiverPort } = await new Promise<{ receiverPort: number }>((resolve) =>
    worker.once('message', resolve),
  );
  return {
    receiverPort,
    target: (origin: string, headers: Record<string, string>) => worker.postMessage({ origin, headers }),
    send: (count: number) =>
      new Promise<void>((resolve, reject) => {
        worker.once('message', ({ failure }: { failure?: string }) =>
          failure === undefined ? resolve() : reject(new Error(`a request failed: ${failure}`)),
        );
        worker.postMessage({ count });
      }),
    stop: () => worker.terminate(),
  };
}

/** The part of a script's URL that names it: `src/gateway/attempt.ts`, `undici/lib/…`, `node:net`. */
function moduleOf(url: string): string {
  if (url === '') return '(native)';
  const inRepo = url.indexOf('/src/');
  if (inRepo >= 0 && !url.includes('node_modules')) return url.slice(inRepo + 1);
  const inModules = url.lastIndexOf('node_modules/');
  if (inModules >= 0) return url.slice(inModules + 'node_modules/'.length);
  return url.replace(/^file:\/\//, '');
}

function tally(root: ProfileNode) {
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (node.selfSize > 0) {
      total += node.selfSize;
      const module = moduleOf(url);
      // Modules tsx compiled report no line (0): their functions are told apart by name.
      const fn = `${functionName || '(anonymous)'} ${module}${lineNumber > 0 ? `:${lineNumber + 1}` : ''}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
      byModule.set(module, (byModule.get(module) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(root);
  return { total, byFunction, byModule };
}

function top(map: Map<string, number>, requests: number): Record<string, number> {
  return Object.fromEntries(
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, bytes]) => [name, Math.round(bytes / requests)]),
  );
}

async function main(): Promise<void> {
  const childDir = compileChildren(benchDir, repoRoot);
  const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {
    LATENCY_MS: String(LATENCY_MS),
  });
  const client = await startClient();
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: values.traces ? `http://127.0.0.1:${client.receiverPort}` : '',
  };
  for (const pair of values.env) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--env takes NAME=value, got ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const { server, adminKey, stop } = await startInProcessGateway('allocation', { env });
  const session = new Session();
  session.connect();
  try {
    const origin = await server.listen();
    client.target(origin, {
      'content-type': 'application/json',
      'x-gateway-api-key': adminKey,
      authorization: 'Bearer sk-bench',
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': `http://127.0.0.1:${upstream.port}/v1`,
    });
    await client.send(REQUESTS);
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL_BYTES,
      includeObjectsCollectedByMajorGC: true,
      // With --survivors, what young-generation collections collected is left out: what remains was
      // copied out of the young generation (promoted, or still alive at the end).
      includeObjectsCollectedByMinorGC: !values.survivors,
    });
    await client.send(REQUESTS);
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as {
      profile: { head: ProfileNode };
    };
    const { total, byFunction, byModule } = tally(profile.head);
    console.log(
      JSON.stringify(
        {
          requests: REQUESTS,
          connections: CONNECTIONS,
          traces: values.traces,
          survivors: values.survivors,
          upstream_latency_ms: LATENCY_MS,
          env: values.env,
          bytes_per_request: round(total / REQUESTS, 0),
          by_module: top(byModule, REQUESTS),
          by_function: top(byFunction, REQUESTS),
          node: process.version,
        },
        null,
        2,
      ),
    );
  } finally {
    await client.stop();
    session.disconnect();
    await stop();
    await upstream.stop();
  }
}

await main();
