/**
 * The client's side of a streamed answer: server-sent events written with backpressure. Headers go out
 * with the first chunk, so that until then a failed attempt can still be replaced by another one (or end
 * as a plain HTTP error). The stream ends either with `data: [DONE]` (a complete answer) or with an
 * in-band error event and no `[DONE]`, so a broken answer is never presented as a complete one.
 */
import type { ServerResponse } from 'node:http';
import type { ChatCompletionChunk } from '../core/openai-types.js';
import type { ErrorBody } from '../core/errors.js';

/** What every chunk of the client's stream shares; a continuation on another target keeps it. */
export interface StreamIdentity {
  id: string;
  created: number;
  object: string;
}

const DONE = 'data: [DONE]\n\n';

export class ClientStream {
  private headersSent = false;
  private closed = false;
  /** Text written so far per choice index (for continuation on another target, and the log). */
  readonly text = new Map<number, string>();
  chunkCount = 0;
  /** The id, created and object of the first chunk sent. */
  identity: StreamIdentity | undefined;
  /** false once anything but text went out (tool calls, several choices): such an answer cannot be
   * continued on another target. */
  continuable = true;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: () => Record<string, string>,
  ) {}

  get started(): boolean {
    return this.headersSent;
  }

  get clientGone(): boolean {
    return this.closed || this.res.destroyed || this.res.writableEnded;
  }

  private open(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...this.headers(),
    });
    // No flushHeaders(): Node sends the head with the first chunk, in one write, so the client's first
    // byte of body arrives with the headers instead of after a second packet.
  }

  /** Writes one `data:` event; resolves when the socket can take more (backpressure). */
  write(data: string): Promise<void> | undefined {
    this.open();
    if (this.clientGone) return undefined;
    this.chunkCount += 1;
    const ok = this.res.write(`data: ${data}\n\n`);
    if (ok) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  /** Records a choice's text as it goes out. */
  addText(index: number, content: string): void {
    this.text.set(index, (this.text.get(index) ?? '') + content);
  }

  /** Records what a chunk about to be written carries: identity, text, and anything not continuable. */
  note(chunk: ChatCompletionChunk): void {
    if (!this.identity && typeof chunk.id === 'string') {
      this.identity = { id: chunk.id, created: chunk.created, object: chunk.object };
    }
    for (const choice of chunk.choices) {
      if (choice.index !== 0) this.continuable = false;
      const delta = choice.delta as Record<string, unknown> | undefined;
      const content = delta ? delta.content : (choice as unknown as { text?: unknown }).text;
      if (typeof content === 'string' && content.length > 0) this.addText(choice.index, content);
      if (delta && (delta.tool_calls || delta.function_call)) {
        this.continuable = false;
      }
    }
  }

  finish(): void {
    if (this.closed) return;
    this.open();
    this.closed = true;
    if (!this.res.destroyed) this.res.end(DONE);
  }

  /** Ends the stream with an in-band error event and no [DONE]. */
  fail(body: ErrorBody): void {
    if (this.closed) return;
    this.open();
    this.closed = true;
    if (!this.res.destroyed) this.res.end(`data: ${JSON.stringify(body)}\n\n`);
  }
}
