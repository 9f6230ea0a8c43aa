/**
 * The JSON a text carries, for `jsonSchema` and `jsonKeys`: the whole text when it is JSON, else each fenced
 * block (```json … ``` or ``` … ```) that is, else the span from the first `{` to the last `}` (a model's
 * "Here it is: {…} Hope this helps."). Every candidate is found by a forward scan and parsed by JSON.parse,
 * so the work is linear in the text.
 */

const FENCE = '```';

export function jsonValuesIn(text: string): unknown[] {
  const whole = parse(text.trim());
  if (whole !== undefined) return [whole.value];
  const found: unknown[] = [];
  for (const block of fencedBlocks(text)) {
    const parsed = parse(block.trim());
    if (parsed !== undefined) found.push(parsed.value);
  }
  if (found.length > 0) return found;
  const open = text.indexOf('{');
  const close = text.lastIndexOf('}');
  if (open !== -1 && close > open) {
    const parsed = parse(text.slice(open, close + 1));
    if (parsed !== undefined) found.push(parsed.value);
  }
  return found;
}

function* fencedBlocks(text: string): Generator<string> {
  let from = 0;
  for (;;) {
    const start = text.indexOf(FENCE, from);
    if (start === -1) return;
    // The info string (`json`, `JSON`, nothing) runs to the end of the opening line.
    const lineEnd = text.indexOf('\n', start + FENCE.length);
    if (lineEnd === -1) return;
    const end = text.indexOf(FENCE, lineEnd + 1);
    if (end === -1) return;
    yield text.slice(lineEnd + 1, end);
    from = end + FENCE.length;
  }
}

function parse(candidate: string): { value: unknown } | undefined {
  const first = candidate[0];
  // Only objects and arrays: a bare number or string is not "the JSON" a check looks for.
  if (first !== '{' && first !== '[') return undefined;
  try {
    return { value: JSON.parse(candidate) as unknown };
  } catch {
    return undefined;
  }
}
