/**
 * Regular expressions that run in time linear in the text, whatever the pattern: RE2 semantics (re2js, a
 * pure-JavaScript port of RE2) instead of V8's backtracking engine. Every pattern a config supplies
 * (`default.regexMatch` rules, `pattern` keywords of `default.jsonSchema` schemas, `$regex` in conditional
 * routing's queries) and every PII detector goes through here, so no pattern and no input can hang the
 * process with catastrophic backtracking.
 *
 * The price: RE2 has no lookaround and no backreferences. A config pattern using them is refused at config
 * validation with the reason, rather than accepted and run unsafely.
 */
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

export interface LinearRegex {
  test(text: string): boolean;
  /** Every non-overlapping match, leftmost first: where it starts (UTF-16 index) and its text. */
  matches(text: string): Iterable<{ index: number; text: string }>;
  /** The first match's start and length, or null. */
  first(text: string): { index: number; length: number } | null;
}

/** Patterns longer than this are refused: a config's rule is a check, not a program. */
export const MAX_PATTERN_LENGTH = 4096;

/** JavaScript's `i`, `m` and `s` flags. The engine always reads a pattern by code point, as with `u`. */
export interface LinearRegexOptions {
  ignoreCase?: boolean;
  /** `^` and `$` also match at line breaks. */
  multiline?: boolean;
  /** `.` also matches line breaks. */
  dotAll?: boolean;
}

const compiled = new LRUCache<string, LinearRegex>({ max: 1000 });

/**
 * Compiles a pattern written in JavaScript syntax (as the seed's users write `new RegExp(rule)` rules),
 * with RE2 semantics. Throws an Error whose message says why a pattern cannot be used.
 */
export function compileLinearRegex(pattern: string, options: LinearRegexOptions = {}): LinearRegex {
  const flags =
    (options.ignoreCase === true ? RE2JS.CASE_INSENSITIVE : 0) |
    (options.multiline === true ? RE2JS.MULTILINE : 0) |
    (options.dotAll === true ? RE2JS.DOTALL : 0);
  const key = `${flags}:${pattern}`;
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new Error(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  // re2js reads `\k<name>` as the letters `k<name>`; a named backreference is refused as `\1` is.
  if (hasNamedBackreference(pattern)) {
    throw new Error(
      'is not a supported regular expression (named backreference \\k<…>); patterns run in linear time, so lookaround and backreferences are not available',
    );
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern), flags);
  } catch (error) {
    const reason =
      error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    throw new Error(
      `is not a supported regular expression (${reason}); patterns run in linear time, so lookaround and backreferences are not available`,
    );
  }
  const regex: LinearRegex = {
    test: (text) => re.test(text),
    *matches(text) {
      const matcher = re.matcher(text);
      while (matcher.find()) {
        yield { index: matcher.start(), text: matcher.group() ?? '' };
      }
    },
    first(text) {
      const matcher = re.matcher(text);
      return matcher.find() ? { index: matcher.start(), length: matcher.end() - matcher.start() } : null;
    },
  };
  compiled.set(key, regex);
  return regex;
}

/** Whether `pattern` has an escape `\k<` (one scan: each backslash escapes the character after it). */
function hasNamedBackreference(pattern: string): boolean {
  for (let i = 0; i < pattern.length - 1; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] === 'k' && pattern[i + 2] === '<') return true;
    i++;
  }
  return false;
}

/** Why `pattern` cannot be compiled, or null when it can. */
export function linearRegexProblem(pattern: string): string | null {
  try {
    compileLinearRegex(pattern);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
