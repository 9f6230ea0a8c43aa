/**
 * `default.endpointReachability`: passes when the text, as the reference gateway reads it, is the address
 * of an endpoint that answers: an http(s) URL (white space around it aside) that the engine's `probeUrl`
 * reaches, a HEAD request answered below 400 (an unfollowed redirect counts as reachable, as for
 * `validUrls`). The probe goes through the engine's guarded outbound path: the policy of probed URLs
 * (GATEWAY_URL_CHECK_POLICY, not the custom-host policy: the text is a caller's or a model's; a refused
 * address counts as unreachable and is never contacted) and the check's timeout. A text that is
 * not such a URL fails. `data.url` is the URL without its query string or fragment, which may carry tokens.
 */
import { Type } from '@sinclair/typebox';
import { checkedSubject, checkedText, defineCheck } from '../built-in-check.js';

function httpUrlIn(text: string): URL | null {
  const trimmed = text.trim();
  if (!URL.canParse(trimmed)) return null;
  const url = new URL(trimmed);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

export const endpointReachability = defineCheck({
  id: 'endpointReachability',
  parameters: Type.Object({}, { additionalProperties: false }),
  async run(ctx, _parameters, services) {
    const url = httpUrlIn(checkedText(ctx));
    if (url === null) {
      return {
        verdict: false,
        explanation: `The text of ${checkedSubject(ctx)} is not an http or https URL.`,
        data: { url: null },
      };
    }
    const shown = `${url.origin}${url.pathname}`;
    const reachable = await services.probeUrl(url.href, false, ctx.signal);
    return {
      verdict: reachable,
      explanation: reachable ? `${shown} is reachable.` : `${shown} is not reachable.`,
      data: { url: shown },
    };
  },
});
