import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  blankLine,
  jsonlLineBytes,
  jsonlRequestLines,
  LineTooLong,
} from '../../src/gateway/batches/jsonl-lines.js';

/** The lines of the input, as text. */
async function* jsonlLines(input: AsyncIterable<Buffer>, maxLineBytes?: number): AsyncGenerator<string> {
  for await (const bytes of jsonlLineBytes(input, maxLineBytes)) yield bytes.toString('utf8');
}

async function read(chunks: Buffer[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of jsonlLines(Readable.from(chunks))) lines.push(line);
  return lines;
}

describe('the lines of a JSONL file', () => {
  it.each([
    ['', []],
    ['a', ['a']],
    ['a\n', ['a']],
    ['a\r\nb\r\n', ['a', 'b']],
    ['a\rb\n', ['a\rb']],
    ['a\n\nb', ['a', '', 'b']],
    ['é\r\nü', ['é', 'ü']],
    ['\uFEFFa\nb', ['a', 'b']],
    ['\uFEFF', ['']],
    ['a\n\uFEFFb', ['a', '\uFEFFb']],
  ])('splits %j at \\n only', async (text, expected) => {
    const bytes = Buffer.from(text);
    // Every split of the bytes into two chunks (a \r\n or a character cut in two) reads the same.
    for (let cut = 0; cut <= bytes.byteLength; cut += 1) {
      expect(await read([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected);
    }
  });

  it.each([
    ['', []],
    ['{}', [1]],
    ['{}\n\n{}\r\n \t\r\n{}\n\n', [1, 3, 5]],
    ['\uFEFF\n{}\n', [2]],
    ['\n\n', []],
    ['  {}  ', [1]],
    ['{}\n \r \n', [1]],
    // White space that is not JSON's is no blank: a request line (that is not JSON).
    ['{}\n\u00a0\n\f\n\v\n\u2028\n\u3000\n\uFEFF\n', [1, 2, 3, 4, 5, 6, 7]],
  ])('finds the requests of %j on the lines %j, blank lines apart', async (text, expected) => {
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.byteLength; cut += 1) {
      const numbers: number[] = [];
      const chunks = [bytes.subarray(0, cut), bytes.subarray(cut)];
      for await (const { number, bytes: line } of jsonlRequestLines(Readable.from(chunks))) {
        expect(blankLine(line)).toBe(false);
        numbers.push(number);
      }
      expect(numbers).toEqual(expected);
    }
  });

  it('takes a line as long as its bound, its \\r\\n and byte order mark apart, and refuses one byte more', async () => {
    const line = 'x'.repeat(10);
    const bytes = Buffer.from(`\uFEFF${line}\r\n${line}\r\n${line}`);
    for (let cut = 0; cut <= bytes.byteLength; cut += 1) {
      const chunks = [bytes.subarray(0, cut), bytes.subarray(cut)];
      const lines: string[] = [];
      for await (const text of jsonlLines(Readable.from(chunks), 10)) lines.push(text);
      expect(lines).toEqual([line, line, line]);
    }
    for (const text of [`${line}x\n${line}`, `${line}\n${line}x`, `${line}\n${line}x\r\n`]) {
      const reading = (async () => {
        for await (const _ of jsonlLines(Readable.from([Buffer.from(text)]), 10));
      })();
      await expect(reading).rejects.toMatchObject({
        line: text.startsWith(`${line}x`) ? 1 : 2,
        maxBytes: 10,
      });
    }
  });

  it('stops at a line that passes its bound, not holding the rest of it', async () => {
    // A line that never ends: read whole, it would never be done.
    async function* endless(): AsyncGenerator<Buffer> {
      yield Buffer.from('{}\n');
      for (;;) yield Buffer.alloc(1024, 0x20);
    }
    const reading = (async () => {
      for await (const _ of jsonlLines(endless(), 1_000_000));
    })();
    await expect(reading).rejects.toBeInstanceOf(LineTooLong);
    await expect(reading).rejects.toMatchObject({ line: 2 });
  });
});
