/**
 * The one rule for the lines of a JSONL file (a batch input), shared by the upload's count, its JSON
 * check and the batch's reader so the three always agree: a line ends at `\n`, a `\r` just before it is
 * part of the line ending (`\r\n`), a lone `\r` is not a line break (outside a string it is JSON
 * whitespace), and a byte order mark at the start of the file is not part of its first line.
 * `node:readline` also breaks at a lone `\r`, which would make a file the upload counted as one line run
 * as two requests. A line is blank, no request, by one rule too (blankLine): the upload counted lines of
 * other white space (a no-break space) as requests that the reader's `trim()` skipped.
 */

/** A line longer than its reader's bound (`LineTooLong.line` is 1-based). */
export class LineTooLong extends Error {
  constructor(
    readonly line: number,
    readonly maxBytes: number,
  ) {
    super(`Line ${line} is longer than ${maxBytes} bytes`);
  }
}

const LF = 0x0a;
const CR = 0x0d;

function lineBytes(bytes: Buffer): Buffer {
  return bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === CR ? bytes.subarray(0, -1) : bytes;
}

/** UTF-8's byte order mark, which some editors write at the start of a file (Notepad's "UTF-8 with BOM",
 * Windows PowerShell's `Out-File -Encoding utf8`): it marks the encoding and is not part of the text. */
export const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Bytes of a line's own that are not part of it: its `\r`, and the first line's byte order mark. */
const NOT_OF_THE_LINE = 1 + BOM.byteLength;

/** The file's lines as bytes, in order, without their line endings (nor the first line's byte order
 * mark); an empty file has none, a final line without `\n` is a line. Bytes are split before decoding, so
 * a character cut by a chunk stays whole. A line longer than `maxLineBytes` throws LineTooLong as soon as
 * its bytes pass the bound: no more of it is held than that (a file of one 200 MB line is not read into
 * memory whole). */
export async function* jsonlLineBytes(
  input: AsyncIterable<Buffer | string>,
  maxLineBytes = Infinity,
): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const line = (bytes: Buffer): Buffer => {
    const text =
      number === 0 && bytes.subarray(0, BOM.byteLength).equals(BOM) ? bytes.subarray(BOM.byteLength) : bytes;
    number += 1;
    const own = lineBytes(text);
    if (own.byteLength > maxLineBytes) throw new LineTooLong(number, maxLineBytes);
    return own;
  };
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let end = bytes.indexOf(LF); end !== -1; end = bytes.indexOf(LF, start)) {
      pending.push(bytes.subarray(start, end));
      yield line(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      start = end + 1;
    }
    if (start < bytes.byteLength) {
      pending.push(bytes.subarray(start));
      pendingBytes += bytes.byteLength - start;
      if (pendingBytes > maxLineBytes + NOT_OF_THE_LINE) throw new LineTooLong(number + 1, maxLineBytes);
    }
  }
  if (pending.length > 0) yield line(Buffer.concat(pending));
}

/** JSON's whitespace but the line feed, which ends a line. */
const JSON_SPACE = new Uint8Array(256);
for (const byte of [0x20, 0x09, CR]) JSON_SPACE[byte] = 1;

/** Whether a line (as jsonlLineBytes gives it) is blank: nothing but JSON's whitespace (spaces, tabs, `\r`),
 * no request. Other white space (a no-break space, a form feed, U+FEFF past the start of the file) is no
 * JSON, so a line of it is not blank: it holds a request that is not JSON. */
export function blankLine(bytes: Uint8Array): boolean {
  for (const byte of bytes) if (!JSON_SPACE[byte]) return false;
  return true;
}

/** The lines that hold a request (are not blank), each with its number in the file (1-based, counting
 * every line): what the upload counts and checks, and what a batch made from the file runs, by this one
 * rule. LineTooLong past `maxLineBytes`. */
export async function* jsonlRequestLines(
  input: AsyncIterable<Buffer | string>,
  maxLineBytes = Infinity,
): AsyncGenerator<{ number: number; bytes: Buffer }> {
  let number = 0;
  for await (const bytes of jsonlLineBytes(input, maxLineBytes)) {
    number += 1;
    if (!blankLine(bytes)) yield { number, bytes };
  }
}
