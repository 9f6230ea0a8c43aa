/**
 * A JSON answer's text with `hook_results` spliced in as its last key. The answer is then sent (and
 * logged) from the upstream's text, as an answer without hooks is, instead of being parsed, given the key
 * and serialised again.
 */

export interface SplicedAnswer {
  /** The answer's text, `hook_results` its last key. */
  text: string;
  /** The results' text as `text` carries it: what the log record keeps. */
  resultsText: string;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** `answerText` with `resultsText` added as `hook_results`; undefined when it is not a JSON object's text. */
export function spliceResults(answerText: string, resultsText: string): SplicedAnswer | undefined {
  const end = lastNonSpace(answerText, answerText.length - 1);
  if (answerText.charCodeAt(end) !== CLOSE_BRACE) return undefined;
  // Before the closing brace, an object with keys ends a value; an empty one has its opening brace.
  const empty = answerText.charCodeAt(lastNonSpace(answerText, end - 1)) === OPEN_BRACE;
  const text = `${answerText.slice(0, end)}${empty ? '' : ','}"hook_results":${resultsText}}`;
  // V8 keeps a slice of a flat string as a view into it, and slicing makes `text` flat, as sending it
  // would. JSON.stringify's own text is a rope of parts, which the log record's copy to the log thread
  // would flatten again.
  return { text, resultsText: text.slice(text.length - 1 - resultsText.length, -1) };
}

/** The index of the last character at or before `from` that is not JSON white space; -1 when all are. */
function lastNonSpace(text: string, from: number): number {
  let at = from;
  while (at >= 0 && isJsonSpace(text.charCodeAt(at))) at--;
  return at;
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}
