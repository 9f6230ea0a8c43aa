/**
 * The tier Anthropic says served a message (`usage.service_tier`) as OpenAI names tiers in an answer's
 * `service_tier`: `standard` is OpenAI's `default`, `priority` the same word. A tier OpenAI has no name for
 * (`batch`, which a chat call is never served on) is left out.
 */
export function mapAnthropicServiceTier(tier: string | null | undefined): 'default' | 'priority' | undefined {
  switch (tier) {
    case 'standard':
      return 'default';
    case 'priority':
      return 'priority';
    default:
      return undefined;
  }
}
