// Ids shaped like OpenAI's (`chatcmpl-` + 29 base62 characters). A counter keeps them unique and
// cheap: the fake must not be the bottleneck under load.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

let counter = Math.floor(Math.random() * 1e9);

function base62(length: number): string {
  let n = ++counter;
  let out = '';
  for (let i = 0; i < length; i++) {
    out += ALPHABET[n % 62];
    n = Math.floor(n / 62) + i * 7919; // mixes in the position so short counters still fill the width
  }
  return out;
}

export const newChatId = (): string => `chatcmpl-${base62(29)}`;
export const newCompletionId = (): string => `cmpl-${base62(29)}`;
export const newRequestId = (): string => `req_${base62(32)}`;
export const newToolCallId = (): string => `call_${base62(24)}`;

/** A stable `fp_…` per fake name, so two fakes in one test are told apart by fingerprint too. */
export function fingerprintFor(name: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return `fp_${h.toString(16).padStart(8, '0')}ab`;
}

export const unixNow = (): number => Math.floor(Date.now() / 1000);
