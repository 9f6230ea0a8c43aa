// count_tokens on a target without a count of its own: the estimate of messages/estimate-input-tokens.ts.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_PAGE_TOKENS,
  estimateInputTokens,
} from '../../src/gateway/messages/estimate-input-tokens.js';

/** A PDF of `pages` pages whose content streams hold `padding` bytes of binary (scanned pages, fonts…). */
function pdf(pages: number, padding: number): string {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ');
  const objects = [
    '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
    `2 0 obj << /Type /Pages /Kids [${kids}] /Count ${pages} >> endobj`,
    ...Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`),
  ];
  const head = Buffer.from(`%PDF-1.7\n${objects.join('\n')}\nstream\n`, 'latin1');
  const tail = Buffer.from('\nendstream\n%%EOF\n', 'latin1');
  return Buffer.concat([head, randomBytes(padding), tail]).toString('base64');
}

const oneMessage = (content: unknown) =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }) as Parameters<
    typeof estimateInputTokens
  >[0];

describe('the count_tokens estimate', () => {
  it('counts a PDF by its pages, not the characters of its base64', async () => {
    const document = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: pdf(3, 600_000) },
    };
    const withPdf = await estimateInputTokens(oneMessage([document, { type: 'text', text: 'Summarise.' }]));
    const without = await estimateInputTokens(oneMessage([{ type: 'text', text: 'Summarise.' }]));
    expect(withPdf - without).toBe(3 * DOCUMENT_PAGE_TOKENS);
  });

  it('counts a plain-text document by its text, and a document of content blocks by its blocks', async () => {
    const text = 'The quarterly report shows growth in every region.';
    const plain = await estimateInputTokens(
      oneMessage([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: text } }]),
    );
    const blocks = await estimateInputTokens(
      oneMessage([{ type: 'document', source: { type: 'content', content: [{ type: 'text', text }] } }]),
    );
    const asText = await estimateInputTokens(oneMessage(text));
    expect(plain).toBe(asText);
    expect(blocks).toBe(asText);
  });

  // The encoding's time for one word grows with the square of its length: 100,000 characters without a
  // break took tens of seconds, the process doing nothing else meanwhile.
  it('counts a long run without a break in a moment', { timeout: 3_000 }, async () => {
    const run = 'a'.repeat(100_000);
    const counted = await estimateInputTokens(oneMessage(run));
    const short = await estimateInputTokens(oneMessage('a'.repeat(4_000)));
    expect(counted - 4).toBe((short - 4) * 25);
  });
});
