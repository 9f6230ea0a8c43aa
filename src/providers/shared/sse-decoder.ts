import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { FrameDecoder, UpstreamEvent } from '../types.js';

/**
 * Server-sent-events framing for upstream streams (the default of every adapter but Bedrock's). An event
 * is held until its blank line comes: past `maxEventChars` of held text (an incomplete line and the event's
 * `data` lines so far) the stream is refused with UpstreamTooLarge rather than held on; no bound when absent.
 */
export function createSseDecoder(maxEventChars?: number): FrameDecoder {
  const pending: UpstreamEvent[] = [];
  const decoder = new TextDecoder();
  let tooLarge = false;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      pending.push({ kind: 'sse', event: message.event, data: message.data });
    },
    onError(error: ParseError) {
      // Other parse errors (an unknown field, a bad `retry`) are the lines the format says to ignore.
      if (error.type === 'max-buffer-size-exceeded') tooLarge = true;
    },
    maxBufferSize: maxEventChars,
  });
  const drain = (): UpstreamEvent[] => pending.splice(0, pending.length);
  const feed = (text: string) => {
    parser.feed(text);
    if (tooLarge) throw new UpstreamTooLarge('event', maxEventChars as number);
  };
  return {
    push(bytes) {
      feed(decoder.decode(bytes, { stream: true }));
      return drain();
    },
    end() {
      const rest = decoder.decode();
      // Past the bound here, the event is incomplete all the same: dropped below, with no need to refuse.
      if (rest && !tooLarge) parser.feed(rest);
      // A final event without its blank line is incomplete: the stream was cut, so it is dropped.
      parser.reset({ consume: false });
      return drain();
    },
  };
}
