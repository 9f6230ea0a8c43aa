/**
 * The text of a failed pass-through answer, read whole so that the target's credentials can be cut out of
 * it. A provider may compress its answer though it was not asked to (`Accept-Encoding` is not forwarded):
 * such a body is decompressed first — read as text it would be garbage the credentials could hide in —
 * and relayed as the text, without its `content-encoding`.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import type { UpstreamBody } from '../upstream.js';

/** At most this much text comes out of a compressed error (a few KiB in practice). */
const MAX_DECODED_BYTES = 16 << 20;

const decoder =
  (
    decode: (
      bytes: Buffer,
      options: ZlibOptions,
      callback: (error: Error | null, out: Buffer) => void,
    ) => void,
  ) =>
  (bytes: Buffer) =>
    promisify(decode)(bytes, { maxOutputLength: MAX_DECODED_BYTES });

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
  if (codings.length === 0 || !codings.every((coding) => coding in DECODERS)) {
    return { text: await body.text(), headers };
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  let bytes: Buffer = Buffer.concat(chunks);
  // Codings are listed in the order they were applied: undone from the last.
  for (const coding of codings.reverse()) bytes = await DECODERS[coding](bytes);
  const { 'content-encoding': _applied, ...rest } = headers;
  void _applied;
  return { text: bytes.toString('utf8'), headers: rest };
}
