import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { FrameDecoder, UpstreamEvent } from '../types.js';

/** Server-sent-events framing for upstream streams (the default of every adapter but Bedrock's). */
export function createSseDecoder(): FrameDecoder {
  const pending: UpstreamEvent[] = [];
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      pending.push({ kind: 'sse', event: message.event, data: message.data });
    },
  });
  const drain = (): UpstreamEvent[] => pending.splice(0, pending.length);
  return {
    push(bytes) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      return drain();
    },
    end() {
      const rest = decoder.decode();
      if (rest) parser.feed(rest);
      // A final event without its blank line is incomplete: the stream was cut, so it is dropped.
      parser.reset({ consume: false });
      return drain();
    },
  };
}
