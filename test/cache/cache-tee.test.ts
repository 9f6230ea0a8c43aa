/**
 * The tee that keeps a stream for the cache on its way to the client: it keeps no more than the cache
 * could store, so a long stream that will never be stored is not held whole in memory.
 */
import { describe, expect, it } from 'vitest';
import { BufferSink, type AnswerChunk } from '../../src/gateway/sink.js';
import { CacheTee } from '../../src/gateway/steps/cache-step.js';

const chunk = (i: number): AnswerChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1770000000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content: `piece ${i} `.padEnd(80, '.') }, finish_reason: null }],
});

describe('CacheTee', () => {
  it('keeps every payload of a stream the cache can store', () => {
    const buffer = new BufferSink();
    const tee = new CacheTee(buffer, 100_000);
    for (let i = 0; i < 20; i++) void tee.chunk(chunk(i), undefined);
    expect(tee.chunks).toHaveLength(20);
    expect(JSON.parse(tee.chunks![3]!)).toEqual(chunk(3));
  });

  it('lets go of a stream once it is larger than the cache stores, and still passes it all on', async () => {
    const buffer = new BufferSink();
    const tee = new CacheTee(buffer, 2_000);
    for (let i = 0; i < 20; i++) void tee.chunk(chunk(i), JSON.stringify(chunk(i)));
    tee.end();
    expect(tee.chunks).toBeUndefined();
    const result = await buffer.result;
    expect(result.kind === 'stream' && result.chunks).toHaveLength(20);
  });
});
