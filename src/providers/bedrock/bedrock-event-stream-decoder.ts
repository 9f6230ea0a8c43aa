import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { FrameDecoder, UpstreamEvent } from '../types.js';

/**
 * AWS binary event-stream framing: each message starts with its total length (4 bytes, big-endian), so
 * bytes are gathered until a whole message is there, then decoded by the Smithy codec (which checks the
 * CRCs). String headers are kept; the payload is parsed as JSON, or kept as text when it is not JSON.
 * A message whose length is more than `maxEventBytes` is refused (UpstreamTooLarge) as soon as its length
 * is read, rather than gathered; no bound when absent.
 */
export function createBedrockEventStreamDecoder(maxEventBytes = Infinity): FrameDecoder {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  let buffer = new Uint8Array(0);

  const drain = (): UpstreamEvent[] => {
    const events: UpstreamEvent[] = [];
    while (buffer.length >= 4) {
      const length = new DataView(buffer.buffer, buffer.byteOffset, 4).getUint32(0, false);
      if (length > maxEventBytes) throw new UpstreamTooLarge('event', maxEventBytes);
      if (buffer.length < length) break;
      const message = codec.decode(buffer.subarray(0, length));
      buffer = buffer.subarray(length);
      const headers: Record<string, string> = {};
      for (const [name, header] of Object.entries(message.headers)) {
        if (header.type === 'string') headers[name] = header.value;
      }
      const text = toUtf8(message.body);
      let payload: unknown = text;
      try {
        payload = text === '' ? {} : JSON.parse(text);
      } catch {
        // kept as text: the translator reports it as malformed
      }
      events.push({ kind: 'message', headers, payload });
    }
    return events;
  };

  return {
    push(bytes) {
      const joined = new Uint8Array(buffer.length + bytes.length);
      joined.set(buffer, 0);
      joined.set(bytes, buffer.length);
      buffer = joined;
      return drain();
    },
    end() {
      const events = drain();
      buffer = new Uint8Array(0); // a partial message: the stream was cut
      return events;
    },
  };
}
