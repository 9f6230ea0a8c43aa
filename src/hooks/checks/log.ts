/**
 * `default.log` {logURL, headers}: POSTs the call (outbound-call.ts) to the log URL and passes. A non-2xx
 * status, a refused address, a network error or the timeout is an error (the check throws), so a log that
 * was not written is seen in the results rather than passed off as written.
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
} from './outbound-call.js';

export const log = defineCheck({
  id: 'log',
  parameters: Type.Object(
    { logURL: HttpUrlSchema, headers: Type.Optional(HeadersSchema) },
    { additionalProperties: false },
  ),
  refine: (p) => outboundRuleBreak('logURL', p.logURL, p.headers),
  async run(ctx, p, services) {
    const answer = await services.postJson(
      p.logURL,
      payloadOf(ctx),
      headersOf(p.headers),
      ctx.signal,
      'logURL',
    );
    requireSuccess('The log URL', answer.status);
    return { verdict: true, explanation: 'The call was logged.' };
  },
});
