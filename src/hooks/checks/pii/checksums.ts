/**
 * The validity rules that separate a real identifier from a run of digits that looks like one: Luhn for
 * payment cards, ISO 13616 mod-97 for IBANs, the US SSA's never-issued ranges for SSNs, and HMRC's
 * unallocated prefixes for UK National Insurance numbers.
 */

/** Luhn (mod 10) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** Issuer prefixes of the card networks in use (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro). */
const CARD_PREFIX =
  /^(?:4|5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720|3[47]|30[0-5]|36|38|35|6011|64[4-9]|65|62|5[06-9]|6)/;

export function cardNumberValid(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && CARD_PREFIX.test(digits) && luhnValid(digits);
}

/** ISO 13616: the country code and check digits moved to the end, letters as 10–35, the number mod 97 is 1. */
export function ibanValid(iban: string): boolean {
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 && code <= 90 ? code - 55 : code - 48;
    if (value < 0 || value > 35) return false;
    // Two-digit letter values shift the remainder by 100, digits by 10.
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder === 1;
}

/**
 * US SSN (AAA-GG-SSSS): never issued with area 000, 666 or 900–999, group 00 or serial 0000; and two
 * numbers printed on sample cards and long since voided.
 */
export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  if (a === 0 || a === 666 || a >= 900) return false;
  if (group === '00' || serial === '0000') return false;
  const whole = `${area}${group}${serial}`;
  return whole !== '078051120' && whole !== '219099999';
}

/** UK NINO: two prefix letters (D, F, I, Q, U, V never; O never second), six digits, suffix A–D. */
const NINO_UNALLOCATED_PREFIXES = new Set(['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ']);

export function ninoValid(prefix: string): boolean {
  return !NINO_UNALLOCATED_PREFIXES.has(prefix);
}
