/** Ids of responses and items, in OpenAI's style (`resp_…`, `msg_…`): a prefix and 24 random bytes in hex. */
import { randomBytes } from 'node:crypto';

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs';

export function newResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

export function newItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}
