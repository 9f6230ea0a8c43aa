/**
 * What the semantic cache embeds and what it hashes into the partition: only the last user turn's text
 * is compared by meaning; a change anywhere else is another partition.
 */
import { describe, expect, it } from 'vitest';
import {
  partitionKey,
  semanticRequestOf,
  type PartitionInput,
} from '../../src/gateway/cache/semantic/semantic-key.js';

const chat = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages,
  ...extra,
});

function partitionOf(body: Record<string, unknown>, overrides: Partial<PartitionInput> = {}): string {
  const request = semanticRequestOf('chat', body);
  if (!request) throw new Error('not comparable');
  return partitionKey({
    workspaceId: 'ws',
    namespace: null,
    endpoint: 'chat',
    provider: 'openai',
    host: null,
    model: 'gpt-4o-mini',
    rest: request.rest,
    embedder: { virtual_key: 'e', model: 'm' },
    strict: true,
    headers: { 'x-request-id': 'r' },
    ...overrides,
  });
}

describe('semanticRequestOf', () => {
  it('embeds the last user turn only, text or text parts', () => {
    const body = chat([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is' },
          { type: 'text', text: 'the time?' },
        ],
      },
    ]);
    const request = semanticRequestOf('chat', body);
    expect(request?.text).toBe('What is\nthe time?');
    expect((request?.rest.messages as unknown[]).length).toBe(3);
    expect(semanticRequestOf('completions', { model: 'm', prompt: 'Once upon' })?.text).toBe('Once upon');
  });

  it('leaves to the exact cache what it cannot compare by meaning', () => {
    const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
    for (const body of [
      chat([{ role: 'user', content: [{ type: 'text', text: 'what is this' }, image] }]),
      chat([{ role: 'assistant', content: 'Hi' }]),
      chat([{ role: 'tool', tool_call_id: 'c', content: '42' }]),
      chat([{ role: 'user', name: 'ann', content: 'hello' }]),
      chat([{ role: 'user', content: '   ' }]),
      chat([]),
    ]) {
      expect(semanticRequestOf('chat', body), JSON.stringify(body)).toBeUndefined();
    }
    expect(semanticRequestOf('completions', { model: 'm', prompt: ['a', 'b'] })).toBeUndefined();
    expect(semanticRequestOf('embeddings', { model: 'm', input: 'a' })).toBeUndefined();
  });
});

describe('partitionKey', () => {
  const base = chat([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What time is it?' },
  ]);

  it('is the same whatever the last question, and whatever fields do not change the answer', () => {
    const other = chat(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Tell me the time' },
      ],
      {
        user: 'someone',
        stream_options: { include_usage: true },
      },
    );
    expect(partitionOf(other)).toBe(partitionOf(base));
  });

  it('differs for every other part of the request and of its context', () => {
    const key = partitionOf(base);
    const variants: Array<[string, string]> = [
      [
        'system prompt',
        partitionOf(
          chat([
            { role: 'system', content: 'Be long.' },
            { role: 'user', content: 'x' },
          ]),
        ),
      ],
      [
        'earlier turn',
        partitionOf(
          chat([
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
            { role: 'user', content: 'x' },
          ]),
        ),
      ],
      ['temperature', partitionOf({ ...base, temperature: 0.5 })],
      ['tools', partitionOf({ ...base, tools: [{ type: 'function', function: { name: 'f' } }] })],
      ['stream', partitionOf({ ...base, stream: true })],
      ['workspace', partitionOf(base, { workspaceId: 'other' })],
      ['namespace', partitionOf(base, { namespace: 'n' })],
      ['provider', partitionOf(base, { provider: 'anthropic' })],
      ['host', partitionOf(base, { host: 'https://example.com' })],
      ['model', partitionOf(base, { model: 'gpt-4o' })],
      ['embedder', partitionOf(base, { embedder: { virtual_key: 'e', model: 'other' } })],
      ['strict', partitionOf(base, { strict: false })],
      ['anthropic-beta', partitionOf(base, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })],
    ];
    for (const [name, variant] of variants) expect(variant, name).not.toBe(key);
  });

  it("differs by the target's deployment and API version, and by its credential", () => {
    const azure = (extra: Record<string, unknown>) =>
      partitionOf(base, { target: { provider: 'azure-openai', api_key: 'k1', ...extra } });
    const big = azure({ cloudd_deployment_name: 'gpt4o', cloudd_api_version: '2024-10-21' });
    expect(azure({ cloudd_deployment_name: 'gpt4o-mini', cloudd_api_version: '2024-10-21' })).not.toBe(big);
    expect(azure({ cloudd_deployment_name: 'gpt4o', cloudd_api_version: '2025-01-01' })).not.toBe(big);
    expect(
      azure({ deployments: [{ deployment_id: 'gpt4o-mini', alias: 'gpt-4o-mini', api_version: 'v' }] }),
    ).not.toBe(azure({ deployments: [{ deployment_id: 'gpt4o', alias: 'gpt-4o-mini', api_version: 'v' }] }));
    // Another provider key (or a wrong one) is not answered with what this one asked.
    expect(
      azure({ cloudd_deployment_name: 'gpt4o', cloudd_api_version: '2024-10-21', api_key: 'k2' }),
    ).not.toBe(big);
    expect(azure({ cloudd_deployment_name: 'gpt4o', cloudd_api_version: '2024-10-21', api_key: 'k1' })).toBe(
      big,
    );
    // A target without such settings or a credential leaves the partition as it was.
    expect(partitionOf(base, { target: { provider: 'openai' } })).toBe(partitionOf(base));
  });
});
