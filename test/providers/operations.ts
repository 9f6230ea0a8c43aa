// The adapter calls as the gateway makes them: through the handler of the request's operation.
import { operationOf, streamTranslatorOf } from '../../src/providers/registry.js';
import type {
  AdapterRequest,
  ProviderAdapter,
  StreamTranslator,
  UpstreamRequest,
  UpstreamResponse,
} from '../../src/providers/types.js';

export function buildRequest(
  adapter: ProviderAdapter,
  req: AdapterRequest,
): UpstreamRequest | Promise<UpstreamRequest> {
  return operationOf(adapter, req.endpoint).buildRequest(req);
}

export function parseResponse(adapter: ProviderAdapter, req: AdapterRequest, res: UpstreamResponse): unknown {
  return operationOf(adapter, req.endpoint).parseResponse(req, res);
}

export function createStreamTranslator(adapter: ProviderAdapter, req: AdapterRequest): StreamTranslator {
  return streamTranslatorOf(adapter, req);
}
