import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { JsonlLineCount, jsonlLines, LineTooLong } from '../../src/gateway/batches/jsonl-lines.js';

async function read(chunks: Buffer[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of jsonlLines(Readable.from(chunks))) lines.push(line);
  return lines;
}

function counted(chunks: Buffer[]): number {
  const count = new JsonlLineCount();
  for (const chunk of chunks) count.add(chunk);
  return count.lines;
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
  ])('splits %j at \\n only, and counts as many lines as it reads', async (text, expected) => {
    const bytes = Buffer.from(text);
    // Every split of the bytes into two chunks (a \r\n or a character cut in two) reads the same.
    for (let cut = 0; cut <= bytes.byteLength; cut += 1) {
      const chunks = [bytes.subarray(0, cut), bytes.subarray(cut)];
      expect(await read(chunks)).toEqual(expected);
      expect(counted(chunks)).toBe(expected.length);
    }
  });

  it.each([
    ['', 0],
    ['{}', 1],
    ['{}\n\n{}\r\n \t\r\n{}\n\n', 3],
    ['\uFEFF\n{}\n', 1],
    ['\n\n', 0],
    ['  {}  ', 1],
  ])('counts the requests of %j as the reader finds them, blank lines apart', async (text, expected) => {
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.byteLength; cut += 1) {
      const count = new JsonlLineCount();
      count.add(bytes.subarray(0, cut));
      count.add(bytes.subarray(cut));
      expect(count.requests).toBe(expected);
      const lines = await read([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(lines.filter((line) => line.trim() !== '').length).toBe(expected);
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
