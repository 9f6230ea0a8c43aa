/**
 * The fenced code blocks of a Markdown text (```lang … ```), found by a forward scan so the work is linear in
 * the text whatever it holds. Used by `containsCode` (the language) and `jsonSchema` / `jsonKeys` (the JSON).
 */

const FENCE = '```';

export interface FencedBlock {
  /** The info string's first word, as written (`json`, `Python`, ``), trimmed. */
  language: string;
  body: string;
}

export function* fencedBlocks(text: string): Generator<FencedBlock> {
  let from = 0;
  for (;;) {
    const start = text.indexOf(FENCE, from);
    if (start === -1) return;
    const lineEnd = text.indexOf('\n', start + FENCE.length);
    if (lineEnd === -1) return;
    const end = text.indexOf(FENCE, lineEnd + 1);
    if (end === -1) return;
    const info = text.slice(start + FENCE.length, lineEnd).trim();
    yield { language: info.split(/\s/, 1)[0] ?? '', body: text.slice(lineEnd + 1, end) };
    from = end + FENCE.length;
  }
}
