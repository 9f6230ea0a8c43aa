/**
 * Other spellings of config keys that configs pasted from elsewhere carry: camelCase (`virtualKey`,
 * `onStatusCodes`), which the reference gateway reads as well, and its vendor-named keys, which the
 * interface names neutrally (`aws_region` is `cloudc_region`). They are not accepted (a config has one
 * spelling of each key); the error of such a key names the one meant.
 */

/** The reference gateway's vendor prefixes, and the interface's names of those vendors. */
const VENDOR_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['openai_', 'vendora_'],
  ['vertex_', 'cloudb_'],
  ['aws_', 'cloudc_'],
  ['azure_', 'cloudd_'],
];

const RENAMED: Readonly<Record<string, string>> = {
  strict_open_ai_compliance: 'strict_compat_compliance',
};

/** The config key `key` may have been meant as; undefined when it is written as ours would be. */
export function configKeySpelling(key: string): string | undefined {
  const snake = key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  const renamed = RENAMED[snake];
  if (renamed !== undefined) return renamed;
  for (const [theirs, ours] of VENDOR_PREFIXES) {
    if (snake.startsWith(theirs)) return ours + snake.slice(theirs.length);
  }
  return snake === key ? undefined : snake;
}
