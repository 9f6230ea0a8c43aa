/**
 * Bedrock's event-stream decoder holds a message until all of it came: one whose length (its first four
 * bytes) is past the bound is refused as soon as that length is read, not gathered to its end.
 */
import { describe, expect, it } from 'vitest';
import { createBedrockEventStreamDecoder } from '../../../src/providers/bedrock/index.js';
import { UpstreamTooLarge } from '../../../src/core/upstream-limits.js';
import { encodeEvent } from '../../fakes/bedrock/event-stream.js';

describe('the Bedrock event-stream decoder bound', () => {
  const small = encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi' } });
  const large = encodeEvent('contentBlockDelta', {
    contentBlockIndex: 0,
    delta: { text: 'x'.repeat(8192) },
  });

  it('decodes messages within the bound', () => {
    const decoder = createBedrockEventStreamDecoder(4096);
    expect(decoder.push(small)).toHaveLength(1);
  });

  it('refuses a message past the bound from its length alone', () => {
    const decoder = createBedrockEventStreamDecoder(4096);
    expect(() => decoder.push(large.subarray(0, 4))).toThrow(UpstreamTooLarge);
    expect(createBedrockEventStreamDecoder(16_384).push(large)).toHaveLength(1);
  });
});
