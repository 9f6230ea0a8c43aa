/**
 * The part of AbortSignal the gateway's own calls use (undici's `signal` option, the token exchange): the
 * flag, the reason, and abort listeners. A real AbortSignal is one; so is `CallAbort`.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * An abort for one upstream call: what an AbortController gives, at a fraction of its cost (an
 * AbortController builds a full EventTarget, and the gateway makes one per call). Listeners run once,
 * in order, when `abort` is first called.
 */
export class CallAbort implements AbortSignalLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}
