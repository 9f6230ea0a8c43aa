/**
 * One detector per PII category: a pattern on the linear-time engine (linear-regex.ts) that finds
 * candidates, then a check that keeps the real ones (checksums.ts, the characters around the match, the
 * platform's IPv6 parser). Patterns find, validity rules decide, so candidates can be generous without
 * false positives, and no text can make a pattern backtrack.
 *
 * What is recognised:
 * - email: local@domain.tld;
 * - phone: international numbers written with a leading + (8–15 digits, E.164), North American numbers
 *   written in the usual groups ((415) 555-0132, 415-555-0132, 415.555.0132), and UK national numbers
 *   starting with 0 in groups (020 7946 0958, 07700 900123). A bare run of digits is not taken for a phone
 *   number: too many order numbers and ids look like one;
 * - credit_card: 13–19 digits, optionally grouped by spaces or dashes, with a card network's prefix and a
 *   valid Luhn check digit;
 * - national_id: US Social Security numbers written AAA-GG-SSSS (never-issued ranges excluded) and UK
 *   National Insurance numbers (AB 12 34 56 C, unallocated prefixes excluded);
 * - iban: country code, check digits and account, run together or in groups of four, mod-97 valid;
 * - ip_address: IPv4 dotted quads (not inside a longer dotted number such as a version 1.2.3.4.5) and IPv6
 *   addresses the platform parses as such (not the C++ `std::` kind).
 */
import { isIPv6 } from 'node:net';
import { compileLinearRegex, type LinearRegex } from '../../linear-regex.js';
import { cardNumberValid, ibanValid, ninoValid, ssnValid } from './checksums.js';

export const PII_CATEGORIES = ['email', 'phone', 'credit_card', 'national_id', 'iban', 'ip_address'] as const;
export type PiiCategory = (typeof PII_CATEGORIES)[number];

export interface PiiSpan {
  category: PiiCategory;
  start: number;
  end: number;
}

interface Detector {
  category: PiiCategory;
  pattern: LinearRegex;
  /** Whether the candidate `value` found at `start` in `text` is the real thing. */
  keep(value: string, text: string, start: number): boolean;
}

const ALNUM = /[A-Za-z0-9_]/;
const DIGIT = /[0-9]/;

function charAt(text: string, index: number): string {
  return index >= 0 && index < text.length ? text[index]! : '';
}

/** Not glued to a letter, digit or underscore on either side. */
function standsAlone(value: string, text: string, start: number): boolean {
  return !ALNUM.test(charAt(text, start - 1)) && !ALNUM.test(charAt(text, start + value.length));
}

const digitsOf = (value: string) => value.replace(/\D/g, '');

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';

const DETECTORS: readonly Detector[] = [
  {
    category: 'email',
    pattern: compileLinearRegex(
      '[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\\.[A-Za-z]{2,}',
    ),
    keep: (value, text, start) => !ALNUM.test(charAt(text, start + value.length)),
  },
  {
    category: 'credit_card',
    pattern: compileLinearRegex('[0-9](?:[ -]?[0-9]){12,18}'),
    keep: (value, text, start) => standsAlone(value, text, start) && cardNumberValid(digitsOf(value)),
  },
  {
    category: 'iban',
    pattern: compileLinearRegex(
      '[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)',
    ),
    keep: (value, text, start) => standsAlone(value, text, start) && ibanValid(value.replace(/ /g, '')),
  },
  {
    category: 'national_id',
    pattern: compileLinearRegex('[0-9]{3}-[0-9]{2}-[0-9]{4}'),
    keep: (value, text, start) =>
      standsAlone(value, text, start) &&
      !(charAt(text, start - 1) === '-' || charAt(text, start + value.length) === '-') &&
      ssnValid(value.slice(0, 3), value.slice(4, 6), value.slice(7)),
  },
  {
    category: 'national_id',
    pattern: compileLinearRegex('[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]'),
    keep: (value, text, start) => standsAlone(value, text, start) && ninoValid(value.slice(0, 2)),
  },
  {
    category: 'ip_address',
    pattern: compileLinearRegex(`${OCTET}(?:\\.${OCTET}){3}`),
    keep: (value, text, start) => {
      const before = charAt(text, start - 1);
      const after = charAt(text, start + value.length);
      const afterNext = charAt(text, start + value.length + 1);
      // 1.2.3.4.5 or v1.2.3.4 is a version, not an address.
      return (
        !ALNUM.test(before) &&
        before !== '.' &&
        !ALNUM.test(after) &&
        !(after === '.' && DIGIT.test(afterNext))
      );
    },
  },
  {
    category: 'ip_address',
    // Alternatives longest first: the engine takes the first that matches, not the longest.
    pattern: compileLinearRegex(
      '(?:[0-9A-Fa-f]{1,4}:){1,7}(?:(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4}|:)|::(?:[0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{1,4}',
    ),
    keep: (value, text, start) => {
      const before = charAt(text, start - 1);
      const after = charAt(text, start + value.length);
      const groups = value.split(':').filter((g) => g !== '').length;
      return (
        !ALNUM.test(before) &&
        before !== ':' &&
        !ALNUM.test(after) &&
        after !== ':' &&
        groups >= 2 &&
        isIPv6(value)
      );
    },
  },
  {
    category: 'phone',
    pattern: compileLinearRegex('\\+[0-9]{1,3}(?:[ .-]?\\([0-9]{1,4}\\))?(?:[ .-]?[0-9]{1,5}){1,6}'),
    keep: (value, text, start) => {
      const digits = digitsOf(value).length;
      return (
        !ALNUM.test(charAt(text, start - 1)) && standsAlone(value, text, start) && digits >= 8 && digits <= 15
      );
    },
  },
  {
    category: 'phone',
    pattern: compileLinearRegex('(?:\\([2-9][0-9]{2}\\) ?|[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}'),
    keep: (value, text, start) =>
      standsAlone(value, text, start) &&
      charAt(text, start - 1) !== '-' &&
      charAt(text, start + value.length) !== '-',
  },
  {
    category: 'phone',
    pattern: compileLinearRegex('0[1-37-8][0-9]{1,3}[ -][0-9]{3,4}[ -]?[0-9]{3,4}'),
    keep: (value, text, start) => {
      const digits = digitsOf(value).length;
      return standsAlone(value, text, start) && (digits === 10 || digits === 11);
    },
  },
];

/**
 * The PII of the given categories in `text`, in order, without overlaps: where two detections overlap, the
 * one found by the more specific detector (earlier in the list above) wins.
 */
export function detectPii(text: string, categories: ReadonlySet<PiiCategory>): PiiSpan[] {
  const kept: PiiSpan[] = [];
  // One mark per character taken: a detector's own matches never overlap, so checking and marking cost
  // at most the text's length per detector, however many detections there are.
  const taken = new Uint8Array(text.length);
  for (const detector of DETECTORS) {
    if (!categories.has(detector.category)) continue;
    for (const match of detector.pattern.matches(text)) {
      if (!detector.keep(match.text, text, match.index)) continue;
      const start = match.index;
      const end = start + match.text.length;
      if (taken.subarray(start, end).includes(1)) continue;
      taken.fill(1, start, end);
      kept.push({ category: detector.category, start, end });
    }
  }
  return kept.sort((a, b) => a.start - b.start);
}
