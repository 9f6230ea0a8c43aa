/**
 * The sink of a Responses call: the canonical chat answer (or a native provider's Response) reaches it
 * like any call's, and it hands the client (the next sink, through the Responses codec) the Response. A stored response is updated with its
 * final state before the client is told the answer ended — before `response.completed` is written, or the
 * JSON answer sent —, so a follow-up sent the instant the answer is complete finds it.
 */
import type { GatewayError, ProviderError } from '../../core/errors.js';
import type { ChatCompletion } from '../../core/openai-types.js';
import { ForwardingSink, type CallSink, type JsonAnswer } from '../sink.js';
import { isNativeResponse, type NativeResponse, type ResponseAssembler } from './response-assembler.js';
import type { ResponseObject } from './response-types.js';

/** Stores the response's final state; resolves once it is committed (or at once, when not stored). */
export type SaveResponse = (response: ResponseObject) => Promise<void>;

export class StoredResponseSink extends ForwardingSink {
  private saving: Promise<void> = Promise.resolve();

  constructor(
    next: CallSink,
    private readonly assembler: ResponseAssembler,
    private readonly save: SaveResponse,
  ) {
    super(next);
  }

  /** `response.completed` carries the whole output, so the assembler keeps it all until the end. */
  override get holdsWhole(): boolean {
    return true;
  }

  /** Resolves when the answer has been stored and handed on. */
  get settled(): Promise<void> {
    return this.saving;
  }

  override end(): void {
    this.then(this.assembler.finish().response, () => this.next.end());
  }

  override answer(answer: JsonAnswer): void {
    const { hook_results: hookResults, ...answered } = answer.body as (ChatCompletion | NativeResponse) & {
      hook_results?: unknown;
    };
    const response = isNativeResponse(answered)
      ? this.assembler.fromNative(answered)
      : this.assembler.fromCompletion(answered as ChatCompletion);
    const body = hookResults === undefined ? response : { ...response, hook_results: hookResults };
    this.then(response, () => this.next.answer({ ...answer, body, rawText: undefined }));
  }

  override fail(error: GatewayError | ProviderError, status: number): void {
    this.then(this.assembler.fail(error).response, () => this.next.fail(error, status));
  }

  private then(response: ResponseObject, handOn: () => void): void {
    // A failed write is the store's to report (the save logs it); the client still gets its answer.
    this.saving = this.save(response).then(handOn, handOn);
  }
}
