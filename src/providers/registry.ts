/**
 * Every provider the gateway can call, by id and alias. Native adapters are listed here; the
 * OpenAI-compatible family is data (./openai-compatible/table.ts) turned into adapters.
 */
import { GatewayError } from '../core/errors.js';
import type {
  AdapterRequest,
  EndpointKind,
  OperationHandler,
  ProviderAdapter,
  StreamTranslator,
} from './types.js';
import { ENDPOINT_PATHS } from './shared/endpoint-paths.js';
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

/** The most stop strings the adapter's provider takes for `model` (`ProviderCapabilities.stopSequences`);
 * undefined where no bound is known. */
export function stopSequenceBound(adapter: ProviderAdapter, model: string): number | undefined {
  const bound = adapter.capabilities.stopSequences;
  return typeof bound === 'function' ? bound(model) : bound;
}

/** The handler of one operation, or the one `unsupported_endpoint` refusal every adapter shares. */
export function operationOf<K extends EndpointKind>(
  adapter: ProviderAdapter,
  endpoint: K,
): OperationHandler<K> {
  const handler = adapter.operations[endpoint];
  if (!handler) throw unsupportedEndpoint(adapter, endpoint);
  return handler;
}

/** The stream translator of the request's operation; refused like an absent operation when it never streams. */
export function streamTranslatorOf(adapter: ProviderAdapter, req: AdapterRequest): StreamTranslator {
  const translator = operationOf(adapter, req.endpoint).createStreamTranslator?.(req);
  if (!translator) throw unsupportedEndpoint(adapter, req.endpoint, ' with stream: true');
  return translator;
}

function unsupportedEndpoint(adapter: ProviderAdapter, endpoint: EndpointKind, qualifier = ''): GatewayError {
  return new GatewayError(
    'unsupported_endpoint',
    `The provider ${adapter.id} (${adapter.displayName}) does not offer ${ENDPOINT_PATHS[endpoint]}${qualifier}.`,
  );
}
