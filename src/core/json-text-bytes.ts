/**
 * The UTF-8 size of the text JSON.stringify writes for a JSON value, counted without writing it (the text of
 * a 25 MB prompt is not made once more to be measured). Exact: a string's escapes count as written (`\"`,
 * `\\` and the short forms `\b \f \n \r \t` 2 bytes, other control characters `\u00XX` 6, a lone surrogate
 * `\udXXX` 6), so a body of control characters is not taken for a sixth of its size. Values are those JSON
 * text parses to (no toJSON, no bigint); as JSON.stringify does, a field of undefined is left out and an
 * array's undefined is written null.
 */

/** A character JSON.stringify escapes, or half of a surrogate pair (a lone one is escaped): a string with
 * none is its own UTF-8 bytes between quotes, which Buffer.byteLength counts natively. */
// eslint-disable-next-line no-control-regex
const MAY_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

export function jsonTextBytes(value: unknown): number {
  const own = scalarBytes(value);
  if (own >= 0) return own;
  let bytes = 0;
  // Containers still to count; a scalar is counted where it is met, not pushed (a prompt of 2M numbers
  // is not 2M pushes).
  const pending: object[] = [value as object];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (Array.isArray(next)) {
      // Brackets and the commas between items.
      bytes += next.length === 0 ? 2 : next.length + 1;
      for (const item of next) {
        const itemBytes = scalarBytes(item);
        if (itemBytes >= 0) bytes += itemBytes;
        else if (itemBytes === CONTAINER) pending.push(item as object);
        else bytes += 4; // null
      }
    } else {
      let fields = 0;
      for (const key of Object.keys(next)) {
        const field = (next as Record<string, unknown>)[key];
        const fieldBytes = scalarBytes(field);
        if (fieldBytes === LEFT_OUT) continue;
        fields++;
        // The key, its colon, and the value.
        bytes += stringBytes(key) + 1;
        if (fieldBytes >= 0) bytes += fieldBytes;
        else pending.push(field as object);
      }
      bytes += fields === 0 ? 2 : fields + 1;
    }
  }
  return bytes;
}

/** scalarBytes of an object or array: counted by the caller, item by item. */
const CONTAINER = -1;
/** scalarBytes of what JSON.stringify leaves out of an object (undefined, a function, a symbol). */
const LEFT_OUT = -2;

function scalarBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return numberBytes(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      return value === null ? 4 : CONTAINER;
    default:
      return LEFT_OUT;
  }
}

/** Below this length a string is counted in one pass here: a native call costs more than the loop. */
const SHORT_STRING = 64;

function stringBytes(text: string): number {
  if (text.length < SHORT_STRING) return shortStringBytes(text);
  const bytes = Buffer.byteLength(text, 'utf8') + 2;
  return MAY_ESCAPE.test(text) ? bytes + escapedBytes(text) : bytes;
}

function shortStringBytes(text: string): number {
  let bytes = 2;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x80) bytes += code >= 0x20 && code !== 0x22 && code !== 0x5c ? 1 : asciiEscapeBytes(code);
    else if (code < 0x800) bytes += 2;
    else if (code < 0xd800 || code > 0xdfff) bytes += 3;
    else {
      const next = text.charCodeAt(at + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        at++;
      } else bytes += 6;
    }
  }
  return bytes;
}

/** The written size of an ASCII character JSON.stringify escapes. */
function asciiEscapeBytes(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2;
  return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
}

/** What the escapes of a string add to its UTF-8 size (a lone surrogate, counted 3 bytes by Buffer.byteLength
 * as the replacement character, is written as 6). */
function escapedBytes(text: string): number {
  let added = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x20 || code === 0x22 || code === 0x5c) added += asciiEscapeBytes(code) - 1;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(at + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) at++;
      else added += 3;
    }
  }
  return added;
}

function numberBytes(value: number): number {
  if (!Number.isFinite(value)) return 4; // null
  // An integer's digits counted without writing it; others (fractions, exponents) as String writes them.
  if (Number.isInteger(value) && value > -1e15 && value < 1e15) {
    let digits = value < 0 ? 2 : 1;
    const magnitude = Math.abs(value);
    for (let power = 10; magnitude >= power; power *= 10) digits++;
    return digits;
  }
  return String(value).length;
}
