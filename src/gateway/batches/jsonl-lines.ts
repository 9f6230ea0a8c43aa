/**
 * The one rule for the lines of a JSONL file (a batch input), shared by the upload's count, its JSON
 * check and the batch's reader so the three always agree: a line ends at `\n`, a `\r` just before it is
 * part of the line ending (`\r\n`), a lone `\r` is not a line break (outside a string it is JSON
 * whitespace), and a byte order mark at the start of the file is not part of its first line.
 * `node:readline` also breaks at a lone `\r`, which would make a file the upload counted as one line run
 * as two requests.
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

/** The file's lines as text (UTF-8; the upload refused a batch file that is not); LineTooLong past
 * `maxLineBytes`. */
export async function* jsonlLines(
  input: AsyncIterable<Buffer | string>,
  maxLineBytes = Infinity,
): AsyncGenerator<string> {
  for await (const bytes of jsonlLineBytes(input, maxLineBytes)) yield bytes.toString('utf8');
}

/** Bytes a line may hold and still be blank to the count of requests: JSON's whitespace but the line feed,
 * and those of a byte order mark. Any line the count takes for blank and the reader does not is one the
 * upload refuses as not JSON. */
const BLANK = new Uint8Array(256);
for (const byte of [0x20, 0x09, CR, ...BOM]) BLANK[byte] = 1;

/** Counts the lines of bytes passing through by the same rule, a chunk at a time, and the requests among
 * them: the lines that are not blank, which the batch reader runs. */
export class JsonlLineCount {
  private breaks = 0;
  private open = false;
  private filled = 0;
  /** Whether the line being counted holds more than blanks so far. */
  private lineFilled = false;

  add(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(LF, start);
      const stop = end === -1 ? chunk.byteLength : end;
      // A request's line starts with `{`: the scan stops at its first byte.
      for (let i = start; !this.lineFilled && i < stop; i += 1) if (!BLANK[chunk[i]]) this.lineFilled = true;
      if (end === -1) break;
      this.breaks += 1;
      if (this.lineFilled) this.filled += 1;
      this.lineFilled = false;
      start = end + 1;
    }
    if (chunk.byteLength > 0) this.open = chunk[chunk.byteLength - 1] !== LF;
  }

  get lines(): number {
    return this.breaks + (this.open ? 1 : 0);
  }

  get requests(): number {
    return this.filled + (this.open && this.lineFilled ? 1 : 0);
  }
}
