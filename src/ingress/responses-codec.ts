/**
 * The Responses wire: a JSON answer is the Response object the call's sink made of the chat answer or
 * of a native provider's Response (gateway/responses/stored-response-sink.ts); a stream is server-sent
 * events, `event: <type>` and `data: <event>`, each chat chunk becoming the Responses events it completes
 * and each native event relayed with the gateway's ids and numbering
 * (gateway/responses/response-assembler.ts), ending with `response.completed`, `response.incomplete`, or,
 * when the stream broke, `response.failed` (after an `error` event when the provider reported it). Errors answered before anything went out are the OpenAI error
 * object.
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import { isResponsesStreamEvent } from '../core/responses-types.js';
import type { ResponseAssembler } from '../gateway/responses/response-assembler.js';
import type { ResponseEvent } from '../gateway/responses/response-types.js';
import type { AnswerChunk, JsonAnswer } from '../gateway/sink.js';
import type { IngressCodec, StreamEncoder } from './codec.js';

function framed(events: readonly ResponseEvent[]): string {
  let text = '';
  for (const event of events) text += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return text;
}

class ResponsesStreamEncoder implements StreamEncoder {
  constructor(private readonly assembler: ResponseAssembler) {}

  chunk(chunk: AnswerChunk): string | undefined {
    let events: ResponseEvent[];
    if (isResponsesStreamEvent(chunk)) events = this.assembler.pushNative(chunk);
    else if ('object' in chunk && chunk.object === 'chat.completion.chunk')
      events = this.assembler.push(chunk);
    else return undefined;
    return events.length === 0 ? undefined : framed(events);
  }

  end(): string {
    return framed(this.assembler.finish().events);
  }

  error(error: GatewayError | ProviderError): string {
    return framed(this.assembler.fail(error).events);
  }
}

/** The codec of one Responses call: its stream encoder speaks for the call's assembler. */
export function responsesCodec(assembler: ResponseAssembler): IngressCodec<unknown> {
  return {
    streamContentType: 'text/event-stream; charset=utf-8',
    streamEncoder: () => new ResponsesStreamEncoder(assembler),
    answer: (answer: JsonAnswer) => JSON.stringify(answer.body),
    errorBody: (error) => JSON.stringify(error.toBody()),
  };
}
