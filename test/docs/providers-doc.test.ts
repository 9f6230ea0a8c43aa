import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROVIDERS_DOC_PATH, renderProvidersDoc } from '../../scripts/generate-providers-doc.js';
import { listAdapters } from '../../src/providers/registry.js';

describe('docs/providers.md', () => {
  it('is what scripts/generate-providers-doc.ts renders from the registered adapters', async () => {
    const committed = readFileSync(PROVIDERS_DOC_PATH, 'utf8');
    // On failure: run `npx tsx scripts/generate-providers-doc.ts` and commit docs/providers.md.
    expect(committed).toBe(await renderProvidersDoc());
  });

  it('names every registered provider and alias', async () => {
    const doc = await renderProvidersDoc();
    for (const adapter of listAdapters()) {
      for (const name of [adapter.id, ...(adapter.aliases ?? [])]) expect(doc).toContain(`\`${name}\``);
    }
  });
});
