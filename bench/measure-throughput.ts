// Requests per second at a fixed number of connections, driven by autocannon (programmatically).
import { createRequire } from 'node:module';
import { chatBody, type Target } from './target.js';

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (err: Error | null, result: AutocannonResult) => void,
) => { stop(): void };

// autocannon is CommonJS without bundled types; only its callback API is used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface ThroughputResult {
  rps: number;
  total: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
}

export function measureThroughput(
  target: Target,
  {
    connections,
    durationS,
    upstreamLatencyMs,
  }: { connections: number; durationS: number; upstreamLatencyMs: number },
): Promise<ThroughputResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${target.origin}${target.path}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body: chatBody(upstreamLatencyMs),
        connections,
        duration: durationS,
        timeout: 10,
      },
      (err, result) => {
        clearTimeout(guard);
        if (err) return reject(err);
        resolve({
          rps: result.requests.total / result.duration,
          total: result.requests.total,
          latencyP50: result.latency.p50,
          latencyP99: result.latency.p99,
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
        });
      },
    );
    // autocannon stops itself after `duration`; this only guards against it never calling back.
    const guard = setTimeout(() => instance.stop(), (durationS + 15) * 1000);
  });
}
