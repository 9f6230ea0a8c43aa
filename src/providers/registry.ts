/**
 * Every provider the gateway can call, by id and alias. Native adapters are listed here; the
 * OpenAI-compatible family is data (./openai-compatible/table.ts) turned into adapters.
 */
import type { ProviderAdapter } from './types.js';
import { openAICompatibleAdapters } from './openai-compatible/adapters.js';
import { anthropicAdapter } from './anthropic/index.js';
import { bedrockAdapter } from './bedrock/index.js';
import { googleAdapter } from './google/index.js';
import { vertexAIAdapter } from './vertex-ai/index.js';
import { cohereAdapter } from './cohere/index.js';
import { azureOpenAIAdapter } from './azure-openai/index.js';
import { azureAIAdapter } from './azure-ai/index.js';

const adapters: ProviderAdapter[] = [
  ...openAICompatibleAdapters,
  // Native adapters: one line each.
  anthropicAdapter,
  bedrockAdapter,
  googleAdapter,
  vertexAIAdapter,
  cohereAdapter,
  azureOpenAIAdapter,
  azureAIAdapter,
];

const byName = new Map<string, ProviderAdapter>();
for (const adapter of adapters) {
  byName.set(adapter.id, adapter);
  for (const alias of adapter.aliases ?? []) byName.set(alias, adapter);
}

export function findAdapter(name: string): ProviderAdapter | undefined {
  return byName.get(name.toLowerCase());
}

export function listAdapters(): readonly ProviderAdapter[] {
  return adapters;
}
