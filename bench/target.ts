// A server under test, and the request the bench sends it. The body's model picks the fake upstream's
// latency (`bench-lat-<ms>`), so every target runs the same scenario against the same upstream.
export interface Target {
  name: 'direct' | 'bare' | 'gateway';
  origin: string;
  path: string;
  headers: Record<string, string>;
}

export function chatBody(latencyMs: number, stream = false): string {
  return JSON.stringify({
    model: `bench-lat-${latencyMs}`,
    messages: [{ role: 'user', content: 'Say hello in five words.' }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}
