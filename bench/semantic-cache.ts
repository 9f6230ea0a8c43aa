/**
 * What a semantic cache miss costs besides its embedding call, at a given number of entries in the
 * request's partition (docs/cache.md, "Cost of a miss"). Two parts, printed as one JSON object:
 *
 * 1. **index** (in-process): a partition index of N random unit vectors of D dimensions; after a
 *    warm-up, Q lookups of fresh random queries (the miss path: nothing is near), each followed by the
 *    insert of its query as a miss stores it, each timed alone (wall clock, and the process's CPU time,
 *    which other work on the machine does not inflate). Then **recall**: R near duplicates of stored
 *    entries, at a cosine drawn in [0.95, 1) and at exactly 0.95 (the default threshold, the hardest
 *    case): how many find their entry.
 * 2. **end to end**: a gateway in-process on a fresh SQLite file, the test fake as chat and embedding
 *    upstream (bag-of-words embeddings of 256 dimensions, repeated to the asked dimensions: the same
 *    cosines, the vector of a larger model), the request's partition filled with N entries. Q chat
 *    requests with distinct questions (every one a miss that stores its answer) are timed at the client,
 *    and the embedding call of each is timed inside the gateway; the same requests without a cache are
 *    the baseline. Overhead = p99(miss − its embedding call) − p99(baseline). Then recall end to end:
 *    stored questions asked again with one word of 24 changed (cosine 23/24 ≈ 0.958 when no two words
 *    share a dimension; only pairs at 0.95 or above are counted) must be `SEMANTIC_HIT`s.
 *
 * Bounded and sequential (one request at a time). `npx tsx bench/semantic-cache.ts [entries] [dimensions]
 * [queries] [e2e-entries] [e2e-dimensions] [index|e2e]`; defaults 100000 1536 2000 100000 1536, both
 * parts. Small smoke run: `npx tsx bench/semantic-cache.ts 5000 256 200 2000 256`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { dot, unitVector, VectorIndex } from '../src/gateway/cache/semantic/vector-index.js';
import type { SemanticCacheEntry } from '../src/store/types.js';
import { bagOfWordsVector } from '../test/fakes/openai/embeddings.js';
import { startFakeOpenAI } from '../test/fakes/openai/server.js';
import { round, summarise } from './stats.js';
import { startInProcessGateway } from './in-process-gateway.js';

const ENTRIES = Number(process.argv[2] ?? 100_000);
const DIMENSIONS = Number(process.argv[3] ?? 1536);
const QUERIES = Number(process.argv[4] ?? 2_000);
const E2E_ENTRIES = Number(process.argv[5] ?? ENTRIES);
const E2E_DIMENSIONS = Number(process.argv[6] ?? DIMENSIONS);
const ONLY = process.argv[7];
const THRESHOLD = 0.95;
const RECALL_QUERIES = 1_000;
const BOW_DIMENSIONS = 256;
if (E2E_DIMENSIONS % BOW_DIMENSIONS !== 0) throw new Error(`e2e dimensions: a multiple of ${BOW_DIMENSIONS}`);

function randomUnit(dimensions: number): Float32Array {
  return unitVector(Array.from({ length: dimensions }, () => Math.random() * 2 - 1)) as Float32Array;
}

/** A unit vector at cosine `similarity` of `base`. */
function near(base: Float32Array, similarity: number): Float32Array {
  const noise = randomUnit(base.length);
  const along = dot(noise, base);
  const orthogonal = unitVector(noise.map((x, i) => x - along * base[i])) as Float32Array;
  const sine = Math.sqrt(1 - similarity * similarity);
  return unitVector(base.map((x, i) => similarity * x + sine * orthogonal[i])) as Float32Array;
}

/** Microseconds of CPU this process has used. */
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

function percentiles(samplesMs: number[]) {
  const { p50, p99, max } = summarise(samplesMs);
  return { p50_ms: round(p50, 4), p99_ms: round(p99, 4), max_ms: round(max, 4) };
}

function benchIndex() {
  const index = new VectorIndex(DIMENSIONS);
  const vectors = Array.from({ length: ENTRIES }, () => randomUnit(DIMENSIONS));
  const built = performance.now();
  vectors.forEach((vector, i) => index.add(`e${i}`, vector, Infinity));
  const buildMs = performance.now() - built;
  for (let i = 0; i < 200; i++) {
    const warm = randomUnit(DIMENSIONS);
    index.nearest(warm, 0, THRESHOLD);
    index.add(`w${i}`, warm, Infinity);
  }
  const queries = Array.from({ length: QUERIES }, () => randomUnit(DIMENSIONS));
  const lookups: number[] = [];
  const inserts: number[] = [];
  const misses: number[] = [];
  const missCpu: number[] = [];
  for (const [i, query] of queries.entries()) {
    const cpu = cpuMicros();
    const started = performance.now();
    index.nearest(query, 0, THRESHOLD);
    const looked = performance.now();
    index.add(`q${i}`, query, Infinity);
    const ended = performance.now();
    missCpu.push((cpuMicros() - cpu) / 1000);
    lookups.push(looked - started);
    inserts.push(ended - looked);
    misses.push(ended - started);
  }
  const recall = (similarity: () => number) => {
    let found = 0;
    for (let i = 0; i < RECALL_QUERIES; i++) {
      const target = Math.floor(Math.random() * ENTRIES);
      const result = index.nearest(near(vectors[target], similarity()), 0, THRESHOLD);
      if (result?.id === `e${target}` && result.similarity >= THRESHOLD) found += 1;
    }
    return round(found / RECALL_QUERIES, 4);
  };
  return {
    entries: ENTRIES,
    dimensions: DIMENSIONS,
    approximate: index.approximate,
    build_s: round(buildMs / 1000, 2),
    lookup: percentiles(lookups),
    insert: percentiles(inserts),
    lookup_and_insert: percentiles(misses),
    lookup_and_insert_cpu: percentiles(missCpu),
    recall_095_to_1: recall(() => THRESHOLD + (1 - THRESHOLD) * Math.random()),
    recall_at_095: recall(() => THRESHOLD + 1e-4),
    heap_and_buffers_mb: Math.round(
      (process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers) / 2 ** 20,
    ),
  };
}

interface Asked {
  ms: number;
  cpuMs: number;
  status: string | null;
}

async function benchEndToEnd() {
  const fake = await startFakeOpenAI({ name: 'bench' });
  const { server, adminKey, stop } = await startInProcessGateway('semantic', {
    logLevel: 'silent',
    env: {
      GATEWAY_LOG_BODIES: 'false',
      GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
      GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
      // Every entry of the bench held: none leaves memory.
      GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES: String(E2E_ENTRIES + 2 * QUERIES + 1_000),
    },
  });
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
    const ask = async (config: object, question: string, retried = false): Promise<Asked> => {
      const cpu = cpuMicros();
      const started = performance.now();
      const response = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...admin, 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] }),
      }).catch((err: unknown) => {
        // A kept-alive connection the server closed while the partition was being filled: asked again.
        if (retried) throw err;
        return undefined;
      });
      if (!response) return ask(config, question, true);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      return {
        ms: performance.now() - started,
        cpuMs: (cpuMicros() - cpu) / 1000,
        status: response.headers.get('x-gateway-cache-status'),
      };
    };

    // The partition of these requests, learnt from the first entry stored; then filled.
    const semantic = server.deps.routing.semantic;
    let partition: SemanticCacheEntry | undefined;
    const add = semantic.cache.add.bind(semantic.cache);
    semantic.cache.add = async (entry) => {
      partition ??= entry;
      return add(entry);
    };
    let embeddingMs = 0;
    let embeddingCpuMs = 0;
    const embed = semantic.embed;
    semantic.embed = async (...args) => {
      const cpu = cpuMicros();
      const started = performance.now();
      try {
        const vector = await embed(...args);
        // The fake's 256 dimensions repeated: the same cosines, a vector of the asked size.
        const wide = new Array<number>(E2E_DIMENSIONS);
        for (let i = 0; i < E2E_DIMENSIONS; i++) wide[i] = vector[i % vector.length];
        return wide;
      } finally {
        embeddingMs = performance.now() - started;
        embeddingCpuMs = (cpuMicros() - cpu) / 1000;
      }
    };
    const config = { ...target, cache: { mode: 'semantic' } };
    await ask(config, 'first question of the bench');
    if (!partition) throw new Error('the first request stored no entry');
    const filled = performance.now();
    const answer = partition.answer;
    for (let i = 0; i < E2E_ENTRIES; i += 100) {
      const batch = Array.from({ length: Math.min(100, E2E_ENTRIES - i) }, (_, j) =>
        semantic.cache.add({
          ...partition!,
          id: `sc_${randomUUID()}`,
          exact_key: `bench-${i + j}`,
          vector: randomUnit(E2E_DIMENSIONS),
          answer,
        }),
      );
      await Promise.all(batch);
    }
    const fillMs = performance.now() - filled;
    // Every vector must be in the index (one of other dimensions would be found only exactly).
    const held = await semantic.cache.heldEntries();
    if (held !== E2E_ENTRIES + 1) throw new Error(`the index holds ${held} of ${E2E_ENTRIES + 1} entries`);

    // Twenty-four random words per request, shared with no other request: every one misses. A
    // bag-of-words vector is near another only when most of their words fall in the same dimensions:
    // with four words in 256 dimensions two of a few thousand questions could hash to the same vector.
    const word = () => `w${randomBytes(6).toString('hex')}`;
    const words = () => Array.from({ length: 24 }, word);
    const question = () => words().join(' ');
    for (let i = 0; i < Math.min(50, QUERIES); i++) {
      await ask(target, question());
      await ask(config, question());
    }
    const baseline: number[] = [];
    const baselineCpu: number[] = [];
    const missesCpu: number[] = [];
    const misses: number[] = [];
    const embeddings: number[] = [];
    const asked: string[][] = [];
    for (let i = 0; i < QUERIES; i++) {
      const uncached = await ask(target, question());
      baseline.push(uncached.ms);
      baselineCpu.push(uncached.cpuMs);
      const missed = words();
      const miss = await ask(config, missed.join(' '));
      if (miss.status !== 'SEMANTIC_MISS') throw new Error(`expected a miss, got ${miss.status}`);
      misses.push(miss.ms - embeddingMs);
      missesCpu.push(miss.cpuMs - embeddingCpuMs);
      embeddings.push(embeddingMs);
      asked.push(missed);
    }
    const base = summarise(baseline);
    const miss = summarise(misses);

    // Recall end to end: a stored question with one word changed, when its cosine reaches the threshold.
    let paraphrases = 0;
    let hits = 0;
    for (const stored of asked.slice(0, Math.min(asked.length, RECALL_QUERIES))) {
      const changed = [...stored];
      changed[Math.floor(Math.random() * changed.length)] = word();
      const cosine = dot(
        unitVector(bagOfWordsVector(stored.join(' '), BOW_DIMENSIONS)) as Float32Array,
        unitVector(bagOfWordsVector(changed.join(' '), BOW_DIMENSIONS)) as Float32Array,
      );
      if (cosine < THRESHOLD) continue;
      paraphrases += 1;
      if ((await ask(config, changed.join(' '))).status === 'SEMANTIC_HIT') hits += 1;
    }
    return {
      entries: E2E_ENTRIES + 1,
      dimensions: E2E_DIMENSIONS,
      fill_s: round(fillMs / 1000, 2),
      baseline: percentiles(baseline),
      embedding_call: percentiles(embeddings),
      miss_less_embedding: percentiles(misses),
      overhead_p99_ms: round(miss.p99 - base.p99, 4),
      overhead_p50_ms: round(miss.p50 - base.p50, 4),
      // The same in CPU time of the process (gateway, client and fake alike): what other work on the
      // machine does not inflate.
      cpu_overhead_p99_ms: round(summarise(missesCpu).p99 - summarise(baselineCpu).p99, 4),
      cpu_overhead_p50_ms: round(summarise(missesCpu).p50 - summarise(baselineCpu).p50, 4),
      recall: { paraphrases, semantic_hits: hits, rate: round(hits / (paraphrases || 1), 4) },
    };
  } finally {
    await stop();
    await fake.close();
  }
}

async function main(): Promise<void> {
  const index = ONLY === 'e2e' ? undefined : benchIndex();
  const endToEnd = ONLY === 'index' ? undefined : await benchEndToEnd();
  console.log(
    JSON.stringify({ index, end_to_end: endToEnd, queries: QUERIES, node: process.version }, null, 2),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
