/**
 * jsonTextBytes sizes a fanned-out body (how many of its calls run at once) without writing its text: it
 * must come to exactly what JSON.stringify writes, escapes included, or a body of control characters is
 * taken for a sixth of its size.
 */
import { describe, expect, it } from 'vitest';
import { jsonTextBytes } from '../../src/core/json-text-bytes.js';

const written = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('jsonTextBytes', () => {
  it.each([
    ['plain values', { model: 'm', n: 3, stream: false, stop: null, empty: [], none: {}, t: 0.25 }],
    ['fields left out and array holes written null', { a: undefined, b: [undefined, () => 1, 2], c: 'x' }],
    ['non-ASCII and pairs of surrogates', { content: 'héllo 世界 😀 𝄞', ключ: 'значение' }],
    ['quotes and backslashes', { content: 'say "hi" \\ back\\slash', 'k"\\ey': '"' }],
    ['short escapes', { content: '\b\f\n\r\t line\nbreaks\r\n' }],
    ['other control characters', { content: '\u0000\u0001\u0007\u000b\u000e\u001f end', '\u0002': 1 }],
    [
      'lone surrogates',
      { hi: 'a\ud800b', lo: '\udc00', end: 'x\udbff', reversed: '\udc00\ud800', pair: '\ud83d\ude00' },
    ],
    ['numbers', [0, -0, 7, -12, 1e21, 1.5e-7, 123456789012345, 2 ** 53, -3.25, NaN, Infinity, -Infinity]],
    ['deep nesting', { a: [[[{ b: [{}, [], [null, true, false]] }]]] }],
    ['a top-level string', 'a\nb"c'],
    ['a top-level number', 42],
  ])('counts %s exactly as JSON.stringify writes them', (_name, value) => {
    expect(jsonTextBytes(value)).toBe(written(value));
  });

  it('counts a body of escaped characters at its written size, not its characters', () => {
    for (const char of ['\u0001', '"', '\n', '\\', '\ud800']) {
      const body = { messages: [{ role: 'user', content: char.repeat(100_000) }] };
      expect(jsonTextBytes(body)).toBe(written(body));
    }
  });
});
