/**
 * The small top-level members of a JSON object too large to keep, read piece by piece as a socket splits it.
 */
import { describe, expect, it } from 'vitest';
import { JsonSkeleton } from '../../src/gateway/passthrough/json-skeleton.js';

function skeletonOf(text: string, pieceLength: number, maxMemberChars = 100): unknown {
  const skeleton = new JsonSkeleton(maxMemberChars);
  for (let at = 0; at < text.length; at += pieceLength) skeleton.push(text.slice(at, at + pieceLength));
  return skeleton.value();
}

describe('JsonSkeleton', () => {
  const answer = {
    object: 'list',
    data: Array.from({ length: 20 }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, -0.2] })),
    model: 'text-embedding-3-small',
    usage: { prompt_tokens: 8, total_tokens: 8 },
  };

  it.each([1, 3, 7, 64, 100_000])('keeps the small members, drops the large (pieces of %s)', (piece) => {
    expect(skeletonOf(JSON.stringify(answer, null, piece === 7 ? 2 : undefined), piece)).toEqual({
      object: 'list',
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 8, total_tokens: 8 },
    });
  });

  it('reads strings holding braces, brackets, commas, quotes and escapes as text', () => {
    const tricky = {
      note: 'a }, ] { [ "quoted" \\\\ \\" tail',
      big: 'x'.repeat(500),
      usage: { input_tokens: 3, output_tokens: 2 },
    };
    expect(skeletonOf(JSON.stringify(tricky), 5)).toEqual({ note: tricky.note, usage: tricky.usage });
  });

  it('keeps the small elements of an array', () => {
    const elements = [{ a: 1 }, { big: 'y'.repeat(300) }, { usage: { n: [1, 2] } }];
    expect(skeletonOf(JSON.stringify(elements), 9)).toEqual([{ a: 1 }, { usage: { n: [1, 2] } }]);
  });

  it('gives nothing for an object cut short, or text that is no JSON', () => {
    const text = JSON.stringify(answer);
    expect(skeletonOf(text.slice(0, -10), 13)).toBeUndefined();
    expect(skeletonOf('{"a": nope}', 2)).toBeUndefined();
  });
});
