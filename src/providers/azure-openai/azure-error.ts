/**
 * Azure's error answers → ProviderError. Azure speaks OpenAI's `{"error":{...}}` but with its own codes
 * (`"401"`, `"429"`, `DeploymentNotFound`, `content_filter` with an `innererror` verdict) and often a
 * `type` of null; the codes are mapped to OpenAI's and the wait hint of a 429 message is read. Its
 * authoring APIs (Files, fine-tuning, Batch) answer the Microsoft REST guidelines' ErrorResponse, which
 * names the field at fault `target` where OpenAI says `param`.
 */
import { ProviderError } from '../../core/errors.js';
import { openAIErrorFromResponse } from '../openai/index.js';
import type { UpstreamErrorResponse } from '../types.js';

const AZURE_CODES: Record<string, string> = {
  '401': 'invalid_api_key',
  '403': 'permission_denied',
  '404': 'not_found',
  '408': 'timeout',
  '429': 'rate_limit_exceeded',
  '500': 'server_error',
  DeploymentNotFound: 'model_not_found',
  ResponsibleAIPolicyViolation: 'content_filter',
  content_filter: 'content_filter',
};

export function azureErrorFromResponse(provider: string, res: UpstreamErrorResponse): ProviderError {
  const base = openAIErrorFromResponse(provider, res);
  const code =
    base.code === null ? null : (AZURE_CODES[base.code] ?? (/^\d+$/.test(base.code) ? null : base.code));
  const retryAfterMs = base.retryAfterMs ?? retryHintMs(base.message);
  const param = base.param ?? targetOf(res.bodyText);
  if (code === base.code && retryAfterMs === base.retryAfterMs && param === base.param) return base;
  return new ProviderError({
    status: base.status,
    provider,
    message: base.message,
    type: base.type,
    code,
    param,
    retryAfterMs,
    headers: base.headers,
  });
}

/** "Please retry after 6 seconds." in the message of Azure's 429s. */
function retryHintMs(message: string): number | undefined {
  const match = /retry after (\d+) seconds?/i.exec(message);
  return match ? Number(match[1]) * 1000 : undefined;
}

/** The ErrorResponse's `target` ("the location where the error happened"), null when there is none. */
function targetOf(bodyText: string): string | null {
  try {
    const target = (JSON.parse(bodyText) as { error?: { target?: unknown } } | null)?.error?.target;
    return typeof target === 'string' && target !== '' ? target : null;
  } catch {
    return null;
  }
}
