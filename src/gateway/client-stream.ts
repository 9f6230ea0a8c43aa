/**
 * The client's side of a streamed answer: server-sent events written with backpressure. Headers go out
 * with the first chunk, so that until then a failed attempt can still be replaced by another one (or end
 * as a plain HTTP error). The stream ends either with `data: [DONE]` (a complete answer) or with an
 * in-band error event and no `[DONE]`, so a broken answer is never presented as a complete one.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorBody } from './errors.js';

const DONE = 'data: [DONE]\n\n';

export class ClientStream {
  private headersSent = false;
  private closed = false;
  /** Text written so far per choice index (for continuation on another target, and the log). */
  readonly text = new Map<number, string>();
  chunkCount = 0;

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
    this.res.flushHeaders();
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
