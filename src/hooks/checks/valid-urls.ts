/**
 * `default.validUrls` {onlyDNS}: passes when every http(s) URL in the text is reachable (the engine's
 * `probeUrl`: a HEAD answered below 400, or with `onlyDNS` the host resolving; addresses the policy of
 * probed URLs refuses, GATEWAY_URL_CHECK_POLICY and not the custom-host policy, since the text is a
 * caller's or a model's, count as unreachable). Text without URLs passes. At most 20 distinct URLs are probed, in
 * parallel; further ones are counted in `data.unchecked` and do not change the verdict. `data.invalid`
 * lists the unreachable ones without their query string or fragment, which may carry tokens.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';

export const MAX_PROBED_URLS = 20;

// Greedy over characters a URL cannot hold unescaped: no backtracking, linear in the text.
const URL_PATTERN = /https?:\/\/[^\s<>"'`()[\]{}]+/g;
const TRAILING_PUNCTUATION = '.,;:!?';

export function urlsIn(text: string): string[] {
  const urls = new Set<string>();
  for (const [match] of text.matchAll(URL_PATTERN)) {
    const url = withoutTrailingPunctuation(match);
    if (URL.canParse(url)) urls.add(url);
  }
  return [...urls];
}

/**
 * The sentence's punctuation after a URL ("see https://a.test/."), cut by a backward scan. A pattern
 * anchored at the end (`/[.,;:]+$/`) would try every start in a run of punctuation inside the URL, time
 * quadratic in the text a caller or model writes, spent on the event loop.
 */
function withoutTrailingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && TRAILING_PUNCTUATION.includes(url[end - 1]!)) end--;
  return url.slice(0, end);
}

function withoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

export const validUrls = defineCheck({
  id: 'validUrls',
  parameters: Type.Object({ onlyDNS: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  async run(ctx, parameters, services) {
    const urls = urlsIn(checkedText(ctx));
    const probed = urls.slice(0, MAX_PROBED_URLS);
    const dnsOnly = parameters.onlyDNS === true;
    const reachable = await Promise.all(probed.map((url) => services.probeUrl(url, dnsOnly, ctx.signal)));
    const invalid = probed.filter((_, i) => !reachable[i]).map(withoutQuery);
    const unchecked = urls.length - probed.length;
    return {
      verdict: invalid.length === 0,
      explanation:
        invalid.length === 0
          ? `All ${probed.length} URLs checked are ${dnsOnly ? 'resolvable' : 'reachable'}.`
          : `${invalid.length} of ${probed.length} URLs checked are not ${dnsOnly ? 'resolvable' : 'reachable'}.`,
      data: { checked: probed.length, invalid, unchecked },
    };
  },
});
