/**
 * An ingress codec owns how one API family frames its answers and errors on the wire: OpenAI chat /
 * completions / embeddings today; the prompt envelope, Responses events and Anthropic Messages plug in
 * here with codecs of their own. The pipeline hands canonical events to the client's sink
 * (server/http-sink.ts), which asks the codec for the bytes.
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import type { AnswerChunk, JsonAnswer } from '../gateway/sink.js';

/** Frames one streamed answer; made per call, so it may keep state (event numbering, open blocks). */
export interface StreamEncoder {
  /** The framed text of one chunk, or undefined when the client is not to see it. */
  chunk(chunk: AnswerChunk, raw: string | undefined): string | undefined;
  /** The end of a complete stream. */
  end(): string;
  /** The in-band end of a broken stream: never presented as a complete answer. */
  error(error: GatewayError | ProviderError): string;
}

export interface IngressCodec<Body = unknown> {
  readonly streamContentType: string;
  streamEncoder(body: Body): StreamEncoder;
  /** The text of a non-streamed answer. */
  answer(answer: JsonAnswer): string;
  /** The body of an error answered before anything of the answer went out. */
  errorBody(error: GatewayError | ProviderError): string;
}
