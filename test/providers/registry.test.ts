import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import {
  findAdapter,
  listAdapters,
  operationOf,
  stopSequenceBound,
  streamTranslatorOf,
} from '../../src/providers/registry.js';
import type { AdapterRequest, EndpointKind } from '../../src/providers/types.js';

const ENDPOINTS: EndpointKind[] = [
  'chat',
  'completions',
  'embeddings',
  'messages',
  'count_tokens',
  'responses',
];
/** The operations whose answer is never a stream. */
const NEVER_STREAMED = ['embeddings', 'count_tokens'];

describe('the adapters’ operations', () => {
  it.each(listAdapters().map((adapter) => [adapter.id, adapter] as const))(
    '%s documents exactly the operations it has',
    (_id, adapter) => {
      const offered = ENDPOINTS.filter((endpoint) => adapter.operations[endpoint] !== undefined);
      expect([...adapter.capabilities.endpoints].sort()).toEqual(offered.sort());
      expect(Object.keys(adapter.operations).sort()).toEqual(offered.sort());
    },
  );

  it.each(listAdapters().map((adapter) => [adapter.id, adapter] as const))(
    '%s streams every operation but embeddings and token counts',
    (_id, adapter) => {
      for (const [endpoint, handler] of Object.entries(adapter.operations)) {
        expect(typeof handler.createStreamTranslator, endpoint).toBe(
          NEVER_STREAMED.includes(endpoint) ? 'undefined' : 'function',
        );
      }
    },
  );

  it('refuses an operation the provider lacks with one message naming provider and path', () => {
    const anthropic = findAdapter('anthropic')!;
    let error: unknown;
    try {
      operationOf(anthropic, 'embeddings');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_endpoint' });
    expect((error as Error).message).toBe('The provider anthropic (Anthropic) does not offer /embeddings.');
    expect(() => operationOf(findAdapter('groq')!, 'completions')).toThrowError(
      'The provider groq (Groq) does not offer /completions.',
    );
  });

  it('refuses a stream of an operation that never streams', () => {
    const req = { endpoint: 'embeddings', stream: true } as AdapterRequest;
    expect(() => streamTranslatorOf(findAdapter('openai')!, req)).toThrowError(
      expect.objectContaining({ code: 'unsupported_endpoint' }),
    );
  });
});

// The documented bounds of a chat `stop`: OpenAI's 4, Gemini's 5 (Gemini API and Vertex AI), none so small
// for Claude (Vertex AI's Claude models included), none known for Bedrock's Converse, whose models differ.
describe('stopSequenceBound', () => {
  const bound = (provider: string, model: string) => stopSequenceBound(findAdapter(provider)!, model);

  it('is the provider’s, or its model’s where they differ', () => {
    expect(bound('openai', 'gpt-4o')).toBe(4);
    expect(bound('azure-openai', 'gpt-4o')).toBe(4);
    expect(bound('google', 'gemini-2.5-flash')).toBe(5);
    expect(bound('vertex-ai', 'gemini-2.5-flash')).toBe(5);
    expect(bound('vertex-ai', 'publishers/google/models/gemini-2.5-pro')).toBe(5);
    expect(bound('vertex-ai', 'claude-sonnet-4@20250514')).toBeUndefined();
    expect(bound('vertex-ai', 'anthropic.claude-sonnet-4')).toBeUndefined();
    expect(bound('anthropic', 'claude-sonnet-4')).toBeUndefined();
    expect(bound('bedrock', 'amazon.nova-pro-v1:0')).toBeUndefined();
  });
});
