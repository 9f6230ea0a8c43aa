/**
 * `default.webhook` {webhookURL, headers}: POSTs the call (outbound-call.ts) to the webhook, whose JSON answer
 * `{"verdict": true|false, "explanation"?: string, "data"?: any, "transformedData"?: {request?: {json},
 * response?: {json}}}` decides. A non-2xx status, an answer that is not JSON or has no boolean `verdict`, a
 * refused address, a network error or the timeout is an error (the check throws), which the hook's
 * `on_error` fail mode turns into a pass or a fail.
 *
 * `transformedData` is the reference gateway's way for a webhook to rewrite the call, whatever its verdict:
 * the whole request body under `request.json` before the call, the whole answer under `response.json` after
 * it (null: no rewrite). Ignored, a webhook that redacts would have its redaction dropped and the raw text
 * sent on. The request's `model` and `stream` stay as the client sent them: the call was routed and its
 * answer's form chosen by them before any hook ran.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import type { CheckContext } from '../check-types.js';
import {
  HeadersSchema,
  HttpUrlSchema,
  headersOf,
  outboundRuleBreak,
  payloadOf,
  requireSuccess,
  withoutCredentials,
  withoutHeaderValues,
} from './outbound-call.js';

export const webhook = defineCheck({
  id: 'webhook',
  parameters: Type.Object(
    { webhookURL: HttpUrlSchema, headers: Type.Optional(HeadersSchema) },
    { additionalProperties: false },
  ),
  refine: (p) => outboundRuleBreak('webhookURL', p.webhookURL, p.headers),
  async run(ctx, p, services) {
    const headers = headersOf(p.headers);
    const answer = await services.postJson(p.webhookURL, payloadOf(ctx), headers, ctx.signal, 'webhookURL');
    requireSuccess('The webhook', answer.status);
    const body = answer.body;
    if (
      typeof body !== 'object' ||
      body === null ||
      typeof (body as { verdict?: unknown }).verdict !== 'boolean'
    ) {
      throw new Error('The webhook answered without a boolean "verdict"');
    }
    const { verdict, explanation, data, transformedData } = body as {
      verdict: boolean;
      explanation?: unknown;
      data?: unknown;
      transformedData?: unknown;
    };
    const sent = answer.sentSecrets;
    const rewrite = rewriteOf(ctx, transformedData);
    // Its rewrite goes to the provider or the client (and the log): never a credential it was sent, every
    // other word as the webhook wrote it.
    const transformed = rewrite === undefined ? undefined : withoutCredentials(rewrite, headers, sent);
    // What it says goes into the hook's results: never any header value it was sent.
    return {
      verdict,
      explanation:
        typeof explanation === 'string'
          ? withoutHeaderValues(explanation, headers, sent)
          : `The webhook ${verdict ? 'passed' : 'failed'} the check.`,
      ...(data === undefined ? {} : { data: withoutHeaderValues(data, headers, sent) }),
      ...(transformed === undefined ? {} : { transformed }),
    };
  },
});

type Json = Record<string, unknown>;

/** The body the webhook's `transformedData` gives for this side of the call; undefined when none. */
function rewriteOf(ctx: CheckContext, transformedData: unknown): Json | undefined {
  if (transformedData === undefined || transformedData === null) return undefined;
  if (!isJson(transformedData))
    throw new Error('The webhook answered a transformedData that is not an object');
  const side = ctx.event === 'beforeRequestHook' ? 'request' : 'response';
  const part = transformedData[side];
  if (part === undefined || part === null) return undefined;
  if (!isJson(part)) throw new Error(`The webhook answered a transformedData.${side} that is not an object`);
  const json = part.json;
  if (json === undefined || json === null) return undefined;
  if (!isJson(json)) {
    throw new Error(`The webhook answered a transformedData.${side}.json that is not an object`);
  }
  return side === 'request' ? keepRouting(json, ctx.request.json) : json;
}

/** The rewritten request with the client's `model` and `stream` (present or absent) as they were. */
function keepRouting(rewrite: Json, original: Json): Json {
  const kept: Json = { ...rewrite };
  for (const key of ['model', 'stream']) {
    if (Object.hasOwn(original, key)) kept[key] = original[key];
    else delete kept[key];
  }
  return kept;
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
