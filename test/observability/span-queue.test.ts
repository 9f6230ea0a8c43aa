/**
 * The queue of encoded calls' spans: full batches go at once, a partial one after its delay, one batch at
 * a time, nothing beyond the bound is kept, and a flush sends everything waiting, until its deadline.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SpanQueue, type SpanBatch } from '../../src/observability/span-queue.js';
import type { SpanRecord } from '../../src/observability/span-record.js';

/** A call whose one span is named after it. */
const call = (n: number): SpanRecord[] => [{ name: String(n) } as SpanRecord];

/** A batch that keeps its calls' names. */
class Names implements SpanBatch {
  readonly names: string[] = [];
  get calls(): number {
    return this.names.length;
  }
  add(spans: readonly SpanRecord[]): void {
    this.names.push(spans[0].name);
  }
}
const newBatch = () => new Names();

/** A transport whose sends finish when the test says so. */
function transport() {
  const batches: string[][] = [];
  const finishers: Array<() => void> = [];
  const send = (batch: Names) => {
    batches.push(batch.names);
    return new Promise<void>((resolve) => finishers.push(resolve));
  };
  const finishNext = async () => {
    finishers.shift()?.();
    // The queue moves on in the send's settlement callbacks.
    await vi.advanceTimersByTimeAsync(0);
  };
  return { batches, send, finishNext };
}

describe('span queue', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends a full batch at once and a partial one after the delay', async () => {
    const t = transport();
    const queue = new SpanQueue(newBatch, t.send, { delayMs: 100, maxBatch: 2, maxQueued: 10 });
    queue.add(call(1));
    expect(t.batches).toEqual([]);
    queue.add(call(2));
    expect(t.batches).toEqual([['1', '2']]);
    await t.finishNext();
    queue.add(call(3));
    await vi.advanceTimersByTimeAsync(99);
    expect(t.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.batches).toEqual([['1', '2'], ['3']]);
  });

  it('sends one batch at a time, the next full one as soon as the first is sent', async () => {
    const t = transport();
    const queue = new SpanQueue(newBatch, t.send, { delayMs: 100, maxBatch: 2, maxQueued: 10 });
    for (let n = 1; n <= 5; n++) queue.add(call(n));
    expect(t.batches).toEqual([['1', '2']]);
    await vi.advanceTimersByTimeAsync(500);
    expect(t.batches).toHaveLength(1);
    await t.finishNext();
    expect(t.batches).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    await t.finishNext();
    // What is left waits for its delay.
    expect(t.batches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(t.batches.at(-1)).toEqual(['5']);
  });

  it('drops and counts calls beyond its bound', async () => {
    const t = transport();
    const queue = new SpanQueue(newBatch, t.send, { delayMs: 100, maxBatch: 2, maxQueued: 3 });
    for (let n = 1; n <= 6; n++) queue.add(call(n));
    // 1 and 2 went; 3, 4 and 5 wait; 6 found the queue full.
    expect(queue.dropped).toBe(1);
    await t.finishNext();
    await t.finishNext();
    await vi.advanceTimersByTimeAsync(100);
    expect(t.batches).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('flushes everything waiting, and goes on after a failed send', async () => {
    const batches: string[][] = [];
    let fail = true;
    const queue = new SpanQueue(
      newBatch,
      async (batch) => {
        batches.push(batch.names);
        if (fail) {
          fail = false;
          throw new Error('collector down');
        }
      },
      { delayMs: 60_000, maxBatch: 2, maxQueued: 10 },
    );
    for (let n = 1; n <= 5; n++) queue.add(call(n));
    await queue.flush();
    expect(batches).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('stops flushing at its deadline, dropping and counting what still waits', async () => {
    // A collector that never answers: without a deadline, a stop would wait on it for ever.
    const t = transport();
    const queue = new SpanQueue(newBatch, t.send, { delayMs: 60_000, maxBatch: 2, maxQueued: 10 });
    for (let n = 1; n <= 5; n++) queue.add(call(n));
    let done = false;
    const flushed = queue.flush(performance.now() + 1_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(990);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(10);
    await flushed;
    // 1 and 2 were being sent; 3, 4 and 5 never went.
    expect(t.batches).toEqual([['1', '2']]);
    expect(queue.dropped).toBe(3);
  });

  it('stops at the deadline between batches too', async () => {
    const t = transport();
    const queue = new SpanQueue(newBatch, t.send, { delayMs: 60_000, maxBatch: 2, maxQueued: 10 });
    for (let n = 1; n <= 5; n++) queue.add(call(n));
    const flushed = queue.flush(performance.now() + 1_000);
    await vi.advanceTimersByTimeAsync(500);
    await t.finishNext();
    expect(t.batches).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    await vi.advanceTimersByTimeAsync(500);
    await flushed;
    expect(t.batches).toHaveLength(2);
    expect(queue.dropped).toBe(1);
    // The queue takes calls again afterwards.
    queue.add(call(6));
    await t.finishNext();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.batches.at(-1)).toEqual(['6']);
  });
});
