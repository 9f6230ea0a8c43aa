/**
 * The JSON a text carries, for `jsonSchema` and `jsonKeys`: the whole text when it is JSON, else each fenced
 * block (```json … ``` or ``` … ```) that is, else the span from the first `{` to the last `}` (a model's
 * "Here it is: {…} Hope this helps."). Every candidate is found by a forward scan and parsed by JSON.parse,
 * so the work is linear in the text.
 */
import { fencedBlocks } from './fenced-blocks.js';

export function jsonValuesIn(text: string): unknown[] {
  const whole = parse(text.trim());
  if (whole !== undefined) return [whole.value];
  const found: unknown[] = [];
  for (const block of fencedBlocks(text)) {
    const parsed = parse(block.body.trim());
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
