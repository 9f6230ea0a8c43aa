import { GatewayError } from './errors.js';

/**
 * How much of a provider's answer the gateway holds at once. A provider's answer is read whole (a JSON
 * answer) or event by event (a stream); without a bound, an upstream that never stops (a custom host gone
 * wrong, or a hostile one) would be held in memory to its last byte. The bounds are settings
 * (GATEWAY_UPSTREAM_ANSWER_MAX_BYTES, GATEWAY_UPSTREAM_EVENT_MAX_BYTES, docs/settings.md).
 */
export interface UpstreamLimits {
  /** The most bytes of a whole (not streamed) answer read, and of a stream one attempt sends when what
   * consumes it keeps the whole answer (output checks, a Responses stream). */
  answerBytes: number;
  /** The most of one event of a stream held until it is complete: a server-sent event's text
   * (characters), an AWS event-stream message's bytes. */
  eventBytes: number;
}

const MESSAGES = {
  answer: (limit: number) =>
    `answered with a body larger than ${limit} bytes, the most the gateway reads of a whole answer (GATEWAY_UPSTREAM_ANSWER_MAX_BYTES)`,
  event: (limit: number) =>
    `sent a stream event larger than ${limit} bytes, the most the gateway holds of one event (GATEWAY_UPSTREAM_EVENT_MAX_BYTES)`,
  stream: (limit: number) =>
    `streamed more than ${limit} bytes of an answer the gateway keeps whole until it ends (output checks, a Responses stream), the most it holds of one (GATEWAY_UPSTREAM_ANSWER_MAX_BYTES)`,
  failed: (limit: number) =>
    `answered with a failure larger than ${limit} bytes (or decompressing to more), the most the gateway reads of a pass-through's failed answer to cut the target's credentials out of it`,
};

/** The answer, one event of the stream, a stream kept whole, or a pass-through's failed answer passed its
 * bound: the upstream request is closed. */
export class UpstreamTooLarge extends Error {
  constructor(
    readonly part: 'answer' | 'event' | 'stream' | 'failed',
    readonly limit: number,
  ) {
    // Said of the provider: "openai answered with…".
    super(MESSAGES[part](limit));
    this.name = 'UpstreamTooLarge';
  }
}

/** What an answer past its bound is to the caller: the provider's failure, as a broken answer is (502;
 * retried and fallen back from as one, counted by the breaker). */
export function tooLargeFailure(provider: string, err: UpstreamTooLarge): GatewayError {
  return new GatewayError('upstream_invalid_response', `${provider} ${err.message}`);
}
