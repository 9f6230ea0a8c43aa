/**
 * Which provider account produced an encrypted reasoning item. OpenAI and Azure OpenAI encrypt a
 * reasoning item for the organisation or resource that answered, and refuse it from any other, so the
 * shape of an item (reasoning-items.ts) is not enough to know where it may be sent: the account is.
 *
 * The account is named by a tag: the first 8 bytes of a SHA-256 over the account's identity (the adapter,
 * the address its requests go to and the credentials they carry: provider-resources/resource-target.ts
 * `accountOf`, itself a hash), never a credential. The tag is written into the gateway's id of each
 * reasoning item a native answer holds (`rs_<tag><random>`, as long as any of the gateway's ids), so it
 * travels with the item wherever the item goes: into the stored conversation, and back from a client that
 * sends the item itself in `input`. A native target is sent an encrypted item only when its own tag is
 * the item's (steps/responses-step.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { accountOf } from '../provider-resources/resource-target.js';
import type { ResolvedTarget } from '../resolve-target.js';

const TAG_HEX = 16;

/** The tag of the account a target calls; undefined when the adapter cannot say where it calls. */
export function accountTagOf(resolved: ResolvedTarget): string | undefined {
  const resources = resolved.adapter.resources;
  if (!resources) return undefined;
  return createHash('sha256').update(accountOf(resolved, resources)).digest('hex').slice(0, TAG_HEX);
}

/** A new id of the gateway's for a reasoning item produced by the account tagged `tag`. */
export function reasoningItemId(tag: string): string {
  return `rs_${tag}${randomBytes(24 - TAG_HEX / 2).toString('hex')}`;
}

/** Whether the reasoning item with this id was produced by the account tagged `tag`. */
export function producedBy(itemId: unknown, tag: string): boolean {
  return typeof itemId === 'string' && itemId.startsWith(`rs_${tag}`);
}
