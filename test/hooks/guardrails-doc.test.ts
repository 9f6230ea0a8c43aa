/**
 * docs/guardrails.md stays true to the registry: every built-in check has its section, and every check
 * written in the page's JSON examples (inline or hook form) passes config validation.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_CHECKS, checkParameterError, findCheck } from '../../src/hooks/registry.js';

const doc = readFileSync(new URL('../../docs/guardrails.md', import.meta.url), 'utf8');

function examples(): unknown[] {
  return [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((match) => JSON.parse(match[1]!) as unknown);
}

/** Every [check id, parameters] an example names, in either form. */
function checksIn(value: unknown, out: Array<[string, unknown]> = []): Array<[string, unknown]> {
  if (Array.isArray(value)) value.forEach((item) => checksIn(item, out));
  else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if (typeof record.id === 'string' && 'parameters' in record) out.push([record.id, record.parameters]);
    for (const [key, item] of Object.entries(record)) {
      if (key.startsWith('default.')) out.push([key, item]);
      else checksIn(item, out);
    }
  }
  return out;
}

describe('docs/guardrails.md', () => {
  it('has a section for every built-in check', () => {
    for (const check of BUILT_IN_CHECKS) expect(doc).toContain(`\n### default.${check.id}\n`);
  });

  it('keeps the engine sections for the engine to fill', () => {
    for (const heading of ['## How hooks run', '## Outcomes', '## Streams'])
      expect(doc).toContain(`\n${heading}\n`);
  });

  it('shows only examples that validate', () => {
    const named = examples().flatMap((example) => checksIn(example));
    expect(new Set(named.map(([id]) => id)).size).toBe(BUILT_IN_CHECKS.length);
    for (const [id, parameters] of named) {
      const event = findCheck(id)?.events?.[0] ?? 'afterRequestHook';
      expect(checkParameterError(id, parameters, event), id).toBeNull();
    }
  });
});
