// Sequential requests over one kept-alive connection: the time each takes is the target's own cost
// plus the upstream's, with no queueing to blur it.
import { Client } from 'undici';
import { summarise, type Distribution } from './stats.js';
import { chatBody, type Target } from './target.js';

export interface SequentialOptions {
  requests: number;
  warmup: number;
  /** Hard stop for the measured loop, whatever `requests` says. */
  maxMs: number;
  stream?: boolean;
  /** Called once, when the warm-up is over and the measured requests begin. */
  onMeasuredStart?: () => void;
}

export interface SequentialResult {
  /** Whole request, headers to last byte. */
  total: Distribution;
  /** Request start to the first body byte (for streams: the first SSE event). */
  firstByte: Distribution;
  failures: number;
  firstFailure?: string;
}

export async function measureSequential(
  target: Target,
  options: SequentialOptions,
): Promise<SequentialResult> {
  const client = new Client(target.origin, { pipelining: 1 });
  const body = chatBody(0, options.stream ?? false);
  const headers = { 'content-type': 'application/json', ...target.headers };
  const totals: number[] = [];
  const firstBytes: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  try {
    const deadline = Date.now() + options.maxMs;
    for (let i = 0; i < options.warmup + options.requests && Date.now() < deadline; i++) {
      if (i === options.warmup) options.onMeasuredStart?.();
      const started = process.hrtime.bigint();
      const res = await client.request({ method: 'POST', path: target.path, headers, body });
      let firstByteAt: bigint | undefined;
      let text = '';
      for await (const chunk of res.body) {
        firstByteAt ??= process.hrtime.bigint();
        if (res.statusCode !== 200 && text.length < 500) text += (chunk as Buffer).toString('utf8');
      }
      const ended = process.hrtime.bigint();
      if (res.statusCode !== 200) {
        failures++;
        firstFailure ??= `HTTP ${res.statusCode}: ${text.slice(0, 300)}`;
        if (failures >= 20) break; // a broken target is reported, not hammered
        continue;
      }
      if (i < options.warmup) continue;
      totals.push(Number(ended - started) / 1e6);
      firstBytes.push(Number((firstByteAt ?? ended) - started) / 1e6);
    }
  } finally {
    await client.close();
  }
  return { total: summarise(totals), firstByte: summarise(firstBytes), failures, firstFailure };
}

/** One line per target: `  gateway  n=10000 p50=0.471 ms p99=1.082 ms`, and the failures if any. */
export function printSequential(label: string, result: SequentialResult, which: 'total' | 'firstByte'): void {
  const d = result[which];
  const failed = result.failures ? ` (${result.failures} failed: ${result.firstFailure})` : '';
  console.log(
    `  ${label.padEnd(8)} n=${d.n} p50=${d.p50?.toFixed(3)} ms p99=${d.p99?.toFixed(3)} ms${failed}`,
  );
}
