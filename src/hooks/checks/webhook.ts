/**
 * `default.webhook` {webhookURL, headers}: POSTs the call (outbound-call.ts) to the webhook, whose JSON answer
 * `{"verdict": true|false, "explanation"?: string, "data"?: any}` decides. A non-2xx status, an answer that is
 * not JSON or has no boolean `verdict`, a refused address, a network error or the timeout is an error (the
 * check throws), which the hook's `on_error` fail mode turns into a pass or a fail.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import {
  HeadersSchema,
  HttpUrlSchema,
  headersOf,
  outboundRuleBreak,
  payloadOf,
  requireSuccess,
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
    const { verdict, explanation, data } = body as {
      verdict: boolean;
      explanation?: unknown;
      data?: unknown;
    };
    // What the webhook says goes into the hook's results: never the header values it was sent.
    return {
      verdict,
      explanation:
        typeof explanation === 'string'
          ? withoutHeaderValues(explanation, headers)
          : `The webhook ${verdict ? 'passed' : 'failed'} the check.`,
      ...(data === undefined ? {} : { data: withoutHeaderValues(data, headers) }),
    };
  },
});
