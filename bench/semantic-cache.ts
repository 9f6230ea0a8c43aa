/**
 * What a semantic cache miss costs besides its embedding call, at a given number of entries in the
 * request's partition (docs/cache.md, "Cost of a miss"). Two parts, printed as one JSON object:
 *
 * 1. **index** (in-process): a partition index of N random unit vectors of D dimensions; then Q lookups
 *    of fresh random queries (the miss path: nothing is near) and Q inserts, each timed alone.
 * 2. **end to end**: a gateway in-process on a fresh SQLite file, the test fake as chat and embedding
 *    upstream (bag-of-words embeddings, 256 dimensions), the request's partition filled with N entries.
 *    Q chat requests with distinct questions (every one a miss that stores its answer) are timed at the
 *    client, and the embedding call of each is timed inside the gateway; the same requests without a
 *    cache are the baseline. Overhead = p99(miss − its embedding call) − p99(baseline).
 *
 * Bounded and sequential (one request at a time). `npx tsx bench/semantic-cache.ts [entries] [dimensions]
 * [queries] [e2e-entries]`; defaults 100000 1536 2000 100000. Small smoke run:
 * `npx tsx bench/semantic-cache.ts 5000 256 200 2000`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { unitVector, VectorIndex } from '../src/gateway/cache/semantic/vector-index.js';
import { createGatewayServer } from '../src/gateway-server.js';
import { loadSettings } from '../src/settings.js';
import type { SemanticCacheEntry } from '../src/store/types.js';
import { startFakeOpenAI } from '../test/fakes/openai/server.js';
import { round, summarise } from './stats.js';

const ENTRIES = Number(process.argv[2] ?? 100_000);
const DIMENSIONS = Number(process.argv[3] ?? 1536);
const QUERIES = Number(process.argv[4] ?? 2_000);
const E2E_ENTRIES = Number(process.argv[5] ?? ENTRIES);
const E2E_DIMENSIONS = 256;

function randomUnit(dimensions: number): Float32Array {
  return unitVector(Array.from({ length: dimensions }, () => Math.random() * 2 - 1)) as Float32Array;
}

function percentiles(samplesMs: number[]) {
  const { p50, p99, max } = summarise(samplesMs);
  return { p50_ms: round(p50, 4), p99_ms: round(p99, 4), max_ms: round(max, 4) };
}

function benchIndex() {
  const index = new VectorIndex(DIMENSIONS);
  const built = performance.now();
  for (let i = 0; i < ENTRIES; i++) index.add(`e${i}`, randomUnit(DIMENSIONS), Infinity);
  const buildMs = performance.now() - built;
  const queries = Array.from({ length: QUERIES }, () => randomUnit(DIMENSIONS));
  const lookups: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    index.nearest(query, 0);
    lookups.push(performance.now() - started);
  }
  const inserts: number[] = [];
  for (const [i, vector] of queries.entries()) {
    const started = performance.now();
    index.add(`q${i}`, vector, Infinity);
    inserts.push(performance.now() - started);
  }
  return {
    entries: ENTRIES,
    dimensions: DIMENSIONS,
    approximate: index.approximate,
    build_s: round(buildMs / 1000, 2),
    lookup: percentiles(lookups),
    insert: percentiles(inserts),
  };
}

async function benchEndToEnd() {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-semantic-'));
  const adminKey = `gw-bench-${randomBytes(16).toString('hex')}`;
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: adminKey,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    GATEWAY_LOG_BODIES: 'false',
    GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
    GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
  };
  const fake = await startFakeOpenAI({ name: 'bench' });
  const server = await createGatewayServer(loadSettings(env), { env, logger: pino({ level: 'silent' }) });
  const origin = await server.listen();
  try {
    const admin = { 'content-type': 'application/json', 'x-gateway-api-key': adminKey };
    await fetch(`${origin}/v1/virtual-keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        slug: 'embedder',
        name: 'e',
        provider: 'openai',
        api_key: 'sk',
        custom_host: fake.url,
      }),
    });
    const target = { provider: 'openai', api_key: 'sk', custom_host: fake.url };
    const ask = async (config: object, question: string) => {
      const started = performance.now();
      const response = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...admin, 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      return { ms: performance.now() - started, status: response.headers.get('x-gateway-cache-status') };
    };

    // The partition of these requests, learnt from the first entry stored; then filled.
    const semantic = server.deps.routing.semantic;
    let partition: SemanticCacheEntry | undefined;
    const add = semantic.cache.add.bind(semantic.cache);
    semantic.cache.add = async (entry) => {
      partition ??= entry;
      return add(entry);
    };
    const config = { ...target, cache: { mode: 'semantic' } };
    await ask(config, 'first question of the bench');
    if (!partition) throw new Error('the first request stored no entry');
    const filled = performance.now();
    const answer = partition.answer;
    for (let i = 0; i < E2E_ENTRIES; i++) {
      await semantic.cache.add({
        ...partition,
        id: `sc_${randomUUID()}`,
        exact_key: `bench-${i}`,
        vector: randomUnit(E2E_DIMENSIONS),
        answer,
      });
    }
    const fillMs = performance.now() - filled;

    let embeddingMs = 0;
    const embed = semantic.embed;
    semantic.embed = async (...args) => {
      const started = performance.now();
      try {
        return await embed(...args);
      } finally {
        embeddingMs = performance.now() - started;
      }
    };
    // Twelve random words per request, shared with no other request: every one misses. A bag-of-words
    // vector is near another only when most of their words fall in the same dimensions: with four words
    // in 256 dimensions two of a few thousand questions could hash to the same vector (and rightly hit).
    const word = () => `w${randomBytes(6).toString('hex')}`;
    const question = () => Array.from({ length: 12 }, word).join(' ');
    for (let i = 0; i < Math.min(50, QUERIES); i++) {
      await ask(target, question());
      await ask(config, question());
    }
    const baseline: number[] = [];
    const misses: number[] = [];
    const embeddings: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      baseline.push((await ask(target, question())).ms);
      const miss = await ask(config, question());
      if (miss.status !== 'SEMANTIC_MISS') throw new Error(`expected a miss, got ${miss.status}`);
      misses.push(miss.ms - embeddingMs);
      embeddings.push(embeddingMs);
    }
    const base = summarise(baseline);
    const miss = summarise(misses);
    return {
      entries: E2E_ENTRIES + 1,
      dimensions: E2E_DIMENSIONS,
      fill_s: round(fillMs / 1000, 2),
      baseline: percentiles(baseline),
      embedding_call: percentiles(embeddings),
      miss_less_embedding: percentiles(misses),
      overhead_p99_ms: round(miss.p99 - base.p99, 4),
      overhead_p50_ms: round(miss.p50 - base.p50, 4),
    };
  } finally {
    await server.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const index = benchIndex();
  const endToEnd = await benchEndToEnd();
  console.log(
    JSON.stringify({ index, end_to_end: endToEnd, queries: QUERIES, node: process.version }, null, 2),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
