/**
 * The text of a failed pass-through answer, read whole (up to 16 MiB) so that the target's credentials can
 * be cut out of it. A provider may compress its answer though it was not asked to (`Accept-Encoding` is not forwarded):
 * such a body is decompressed first — read as text it would be garbage the credentials could hide in —
 * and relayed as the text, without its `content-encoding`.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { UpstreamBody } from '../upstream.js';

/**
 * At most this much of a failed answer is read, and comes out of a compressed one (a few KiB in practice):
 * read whole, a larger one would be held in memory to its last byte, however large a provider (a custom
 * host) made it.
 */
const MAX_ANSWER_BYTES = 16 << 20;

const decoder = (
  decode: (bytes: Buffer, options: ZlibOptions, callback: (error: Error | null, out: Buffer) => void) => void,
) => {
  const decoded = promisify(decode);
  return (bytes: Buffer) =>
    decoded(bytes, { maxOutputLength: MAX_ANSWER_BYTES }).catch((err: unknown) => {
      // zlib stops at maxOutputLength with this code: the answer decompresses to more than is read.
      throw (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE'
        ? new UpstreamTooLarge('failed', MAX_ANSWER_BYTES)
        : err;
    });
};

const DECODERS: Record<string, (bytes: Buffer) => Promise<Buffer>> = {
  gzip: decoder(gunzip),
  'x-gzip': decoder(gunzip),
  deflate: decoder(inflate),
  br: decoder(brotliDecompress),
};

export async function failedAnswerText(
  body: UpstreamBody,
  headers: Record<string, string>,
): Promise<{ text: string; headers: Record<string, string> }> {
  const codings = (headers['content-encoding'] ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let bytes = await body.bytes(MAX_ANSWER_BYTES).catch(tooLarge);
  if (codings.length === 0 || !codings.every((coding) => coding in DECODERS)) {
    return { text: bytes.toString('utf8'), headers };
  }
  // Codings are listed in the order they were applied: undone from the last.
  for (const coding of codings.reverse()) bytes = await DECODERS[coding](bytes);
  const { 'content-encoding': _applied, ...rest } = headers;
  void _applied;
  return { text: bytes.toString('utf8'), headers: rest };
}

/** Past its bound (the provider's answer closed), the failure names this bound, not the one of a
 * model's answer. */
function tooLarge(err: unknown): never {
  throw err instanceof UpstreamTooLarge ? new UpstreamTooLarge('failed', err.limit) : err;
}
