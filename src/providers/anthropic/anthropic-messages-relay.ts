/**
 * A Messages stream relayed as it came: every event goes to the client with its own JSON text (so the
 * bytes and the event grammar are Anthropic's exactly), while the relay notes the usage for the log and
 * tells the pipeline when the answer is complete (`message_stop`) or failed (`event: error`, a content
 * event before `message_start`, or a second message begun inside the first; a repeat of the first's
 * `message_start` is dropped). Shared by every host of the API natively: Anthropic and Vertex AI send
 * SSE, Bedrock wraps each event's JSON in an event-stream `chunk` (it unwraps, then hands the text here).
 */
import { ProviderError } from '../../core/errors.js';
import type { MessagesStreamEvent } from '../../core/messages-types.js';
import type { Usage } from '../../core/openai-types.js';
import type { StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import type { AnthropicUsage } from './anthropic-api-types.js';
import { isCount, usageObject } from '../shared/answer-usage.js';
import { anthropicStreamError } from './anthropic-error.js';
import { mergeAnthropicUsage, toOpenAIUsage } from './anthropic-usage.js';

/** The events of an open message: they need its `message_start` first. */
const MESSAGE_EVENTS = new Set([
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
]);

export class MessagesEventRelay implements StreamTranslator {
  private anthropicUsage: AnthropicUsage | undefined;
  private started = false;
  private stopped = false;
  private messageId: string | undefined;

  constructor(private readonly provider: string) {}

  /** One event's JSON text. */
  relay(text: string): StreamOutput[] {
    let event: MessagesStreamEvent;
    try {
      event = JSON.parse(text) as MessagesStreamEvent;
    } catch {
      return [{ type: 'malformed', detail: `not JSON: ${text.slice(0, 200)}` }];
    }
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
      return [{ type: 'malformed', detail: `not a Messages event: ${text.slice(0, 200)}` }];
    }
    if (!this.started && MESSAGE_EVENTS.has(event.type)) {
      // Clients refuse a message's events before its start (the Anthropic SDK throws on them).
      return [{ type: 'error', error: this.invalid(`sent ${event.type} before message_start`) }];
    }
    switch (event.type) {
      case 'error':
        return [{ type: 'error', error: anthropicStreamError(this.provider, event.error ?? {}) }];
      case 'message_start': {
        const id = event.message?.id;
        if (this.started) {
          // A repeat of the open message's start is dropped: clients refuse a second message_start.
          if (id === this.messageId) return [];
          return [{ type: 'error', error: this.splicedMessage(id) }];
        }
        this.started = true;
        this.messageId = id;
        this.anthropicUsage = mergeAnthropicUsage(this.anthropicUsage, event.message?.usage);
        break;
      }
      case 'message_delta':
        this.anthropicUsage = mergeAnthropicUsage(this.anthropicUsage, event.usage as AnthropicUsage);
        break;
      case 'message_stop':
        this.stopped = true;
        return [{ type: 'chunk', chunk: event, raw: text }, { type: 'done' }];
      default:
        break;
    }
    return [{ type: 'chunk', chunk: event, raw: text }];
  }

  /** Another message begun while one is open: two answers spliced into one stream, neither whole. */
  private splicedMessage(id: string | undefined): ProviderError {
    return this.invalid(
      `started message ${String(id)} while message ${String(this.messageId)} was still open`,
    );
  }

  private invalid(what: string): ProviderError {
    return new ProviderError({
      status: 502,
      provider: this.provider,
      message: `${this.provider} ${what}`,
      code: 'upstream_invalid_response',
    });
  }

  push(event: UpstreamEvent): StreamOutput[] {
    if (event.kind !== 'sse') return [{ type: 'malformed', detail: 'not a server-sent event' }];
    return this.relay(event.data);
  }

  end(): StreamOutput[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.anthropicUsage ? toOpenAIUsage(this.anthropicUsage) : undefined;
  }

  serviceTier(): string | undefined {
    return this.anthropicUsage?.service_tier ?? undefined;
  }

  finished(): boolean {
    return this.stopped;
  }
}

/** The usage of a Message object (a JSON answer relayed as it is), in the OpenAI shape for the log;
 * undefined for an answer that is not one. */
export function messagesAnswerUsage(body: unknown): Usage | undefined {
  const usage =
    typeof body === 'object' && body !== null ? usageObject(body as Record<string, unknown>) : undefined;
  if (!usage || !isCount(usage.input_tokens) || !isCount(usage.output_tokens)) return undefined;
  return toOpenAIUsage(usage as AnthropicUsage);
}
