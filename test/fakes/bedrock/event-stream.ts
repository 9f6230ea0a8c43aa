// Bedrock's binary event-stream framing (application/vnd.amazon.eventstream) as ConverseStream sends it:
// every event a message with :event-type / :content-type / :message-type headers and a JSON payload that
// carries a `p` padding field; exceptions are messages of :message-type `exception`.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function padding(length: number): string {
  return 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.slice(0, length % 62);
}

export function encodeEvent(eventType: string, payload: Record<string, unknown>): Uint8Array {
  const body = JSON.stringify({ ...payload, p: padding(eventType.length * 3) });
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(body),
  });
}

/** An InvokeModelWithResponseStream event: the model's own event JSON, base64 in `bytes`. */
export function encodeInvokeChunk(json: string): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ bytes: Buffer.from(json, 'utf8').toString('base64'), p: padding(5) })),
  });
}

export function encodeException(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** A recorded `.chunks.txt` line is `{"<eventType>": payload}`. */
export function parseChunkLine(line: string): { eventType: string; payload: Record<string, unknown> } {
  const parsed = JSON.parse(line) as Record<string, Record<string, unknown>>;
  const [eventType] = Object.keys(parsed);
  return { eventType, payload: parsed[eventType] };
}
