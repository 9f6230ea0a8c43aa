import { describe, expect, it } from 'vitest';
import { newSpanId, newTraceId } from '../../src/gateway/context.js';

describe('generated trace ids', () => {
  it('are UUIDv7: version 7, RFC 9562 variant, the time in the first 48 bits', () => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0, 123);
    const id = newTraceId(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(now);
  });

  it('sort by time and differ within one millisecond', () => {
    const ids = [newTraceId(1_000), newTraceId(1_000), newTraceId(2_000), newTraceId(65_536_000)];
    expect(new Set(ids).size).toBe(4);
    expect(ids[2] > ids[0] && ids[2] > ids[1] && ids[3] > ids[2]).toBe(true);
  });

  it('stay well formed and distinct across many random blocks', () => {
    const traces = new Set<string>();
    const spans = new Set<string>();
    const variants = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const trace = newTraceId(1_000);
      expect(trace).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      traces.add(trace);
      variants.add(trace[19] as string);
      const span = newSpanId();
      expect(span).toMatch(/^[0-9a-f]{16}$/);
      spans.add(span);
    }
    expect(traces.size).toBe(5_000);
    expect(spans.size).toBe(5_000);
    expect([...variants].sort()).toEqual(['8', '9', 'a', 'b']);
  });
});
