// Two servers loaded at once on one core, so that whatever slows the host slows both alike: their CPU per
// request, compared round by round, is then the difference between them, whatever the host's speed that
// round (docs/benchmarks.md, "Both gateways loaded at once"). Used by bench/observability.ts
// (`--concurrent`) and bench/compare.ts.
import type { Child } from './processes.js';
import { cpuTimeMs, waitUntilIdle } from './processes.js';
import type { Target } from './target.js';
import { median } from './stats.js';
import { runWrk } from './wrk.js';

export const UPSTREAM_LATENCY_MS = 20;
/** The servers under test share this core; wrk, the fake upstream and the bench run on the other. */
export const SERVER_CORE = '1';
export const LOAD_CORE = '0';

export interface Round {
  rps: number;
  cpuPerRequestUs: number;
}

export interface Loaded {
  name: string;
  target: Target;
  child: Child;
}

/**
 * Loads the servers for `durationS`, all at once (their wrk runs started in the order given, pinned to
 * `loadCore`), each with `connections`; then waits until each is idle, so the CPU of the work a round left
 * counts to it.
 */
export async function measure(
  servers: Loaded[],
  durationS: number,
  connections: number,
  loadCore: string,
): Promise<Round[]> {
  const cpu0 = servers.map((s) => cpuTimeMs(s.child.pid) ?? NaN);
  const runs = await Promise.all(
    servers.map((s) =>
      runWrk(s.target, { connections, durationS, upstreamLatencyMs: UPSTREAM_LATENCY_MS, pin: loadCore }),
    ),
  );
  for (const s of servers) await waitUntilIdle(s.child);
  return servers.map((s, i) => {
    const r = runs[i];
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${s.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const cpuMs = (cpuTimeMs(s.child.pid) ?? NaN) - cpu0[i];
    return { rps: r.rps, cpuPerRequestUs: (cpuMs * 1000) / r.total };
  });
}

export interface ConcurrentOptions {
  rounds: number;
  seconds: number;
  /** Connections per server (half of what one server alone would get). */
  connections: number;
  loadCore: string;
  /** Label of the generation in the printed lines. */
  generation: number;
}

/**
 * A warm-up, then `rounds` rounds of the two servers loaded at once; each round's measures are added to
 * `results` under the servers' names. Returns the median over the rounds of `test`'s CPU per request
 * divided by `base`'s.
 */
export async function concurrentRounds(
  [base, test]: [Loaded, Loaded],
  results: Map<string, Round[]>,
  options: ConcurrentOptions,
): Promise<number> {
  const { rounds, seconds, connections, loadCore, generation } = options;
  // Warm-up: longer than alone, as each server gets half the core (a first round after 3 s still ran
  // 10–20 % dearer than the next).
  await measure([base, test], 6, connections, loadCore);
  const ratios: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    // Whose load starts first alternates.
    const order = i % 2 === 1 ? [base, test] : [test, base];
    const measured = await measure(order, seconds, connections, loadCore);
    const byName = new Map(order.map((s, k) => [s.name, measured[k]]));
    for (const [name, r] of byName) results.get(name)!.push(r);
    const [b, t] = [byName.get(base.name)!, byName.get(test.name)!];
    ratios.push(t.cpuPerRequestUs / b.cpuPerRequestUs);
    const show = (name: string, r: Round) =>
      `${name} ${r.rps.toFixed(0).padStart(6)} req/s ${r.cpuPerRequestUs.toFixed(0).padStart(4)} µs`;
    console.log(
      `generation ${generation} round ${i}: ${show(base.name, b)}, ${show(test.name, t)} CPU/request; ${test.name} / ${base.name} ${ratios.at(-1)!.toFixed(3)}`,
    );
  }
  console.log(
    `generation ${generation}: CPU per request ${test.name} / ${base.name} ${median(ratios).toFixed(3)}`,
  );
  return median(ratios);
}
