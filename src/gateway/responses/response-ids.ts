/** Ids of responses and items, in OpenAI's style (`resp_…`, `msg_…`): a prefix and 24 random bytes in hex. */
import { randomBytes } from 'node:crypto';

export type ItemIdPrefix = 'msg' | 'fc' | 'fco' | 'rs';

export function newResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

export function newItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** A new id of the gateway's for an item a provider answered natively, with the same prefix as the
 * provider's id (`rs_…`, `msg_…`, `fc_…`, `ws_…` …). */
export function newItemIdLike(upstreamId: unknown): string {
  const prefix = typeof upstreamId === 'string' ? /^([a-z]+)_/.exec(upstreamId)?.[1] : undefined;
  return `${prefix ?? 'item'}_${randomBytes(24).toString('hex')}`;
}
