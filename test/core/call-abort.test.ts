import { describe, expect, it } from 'vitest';
import { CallAbort } from '../../src/core/abort.js';

describe('CallAbort', () => {
  it('runs each listener once, in order, with an AbortError reason', () => {
    const abort = new CallAbort();
    const seen: string[] = [];
    const removed = () => seen.push('removed');
    abort.addEventListener('abort', () => seen.push('first'));
    abort.addEventListener('abort', removed);
    abort.addEventListener('abort', () => seen.push('second'));
    abort.removeEventListener('abort', removed);
    expect(abort.aborted).toBe(false);
    abort.abort();
    abort.abort();
    expect(seen).toEqual(['first', 'second']);
    expect(abort.aborted).toBe(true);
    expect((abort.reason as DOMException).name).toBe('AbortError');
  });

  it('runs no listener removed, the only one or one of several, and those added after', () => {
    const abort = new CallAbort();
    const seen: string[] = [];
    const only = () => seen.push('only');
    abort.addEventListener('abort', only);
    abort.removeEventListener('abort', only);
    abort.removeEventListener('abort', only);
    const last = () => seen.push('last');
    abort.addEventListener('abort', () => seen.push('first'));
    abort.addEventListener('abort', last);
    abort.removeEventListener('abort', last);
    abort.addEventListener('abort', () => seen.push('added'));
    abort.abort();
    expect(seen).toEqual(['first', 'added']);
  });

  it('aborts an undici request in flight, as an AbortSignal would', async () => {
    const { createServer } = await import('node:http');
    const { request } = await import('undici');
    const server = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const abort = new CallAbort();
    const pending = request(`http://127.0.0.1:${port}/`, { signal: abort as unknown as AbortSignal });
    setTimeout(() => abort.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});
