/** The parsed-template cache is bounded by the size of what it holds, not only by its count of entries. */
import { expect, it } from 'vitest';
import { createTemplateCache } from '../../src/gateway/prompts/prompt-template.js';

it('keeps at most its size of templates, however many large ones are read', () => {
  const cache = createTemplateCache(1024 * 1024);
  const filler = 'x'.repeat(64 * 1024);
  // Each text is held twice (its key, its tokens): 20 of 64 KiB are 2.5 MiB had it kept them all.
  for (let i = 0; i < 20; i++) cache.set(`${i} ${filler}`, [['text', `${i} ${filler}`, 0, filler.length]]);
  expect(cache.calculatedSize).toBeLessThanOrEqual(1024 * 1024);
  expect(cache.size).toBe(7);
  expect(cache.has(`19 ${filler}`)).toBe(true);
});
