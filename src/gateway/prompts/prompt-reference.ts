/**
 * How a prompt or a partial is named in a call: `<id or slug>` (the published version), `<…>@latest` (the
 * newest) or `<…>@<n>` (version n). Slugs and ids never hold `@`, so the last one starts the selector.
 */
import { GatewayError } from '../../core/errors.js';
import type { Repositories, StoredPrompt, StoredPromptVersion } from '../../store/types.js';
import type { Lookups } from '../lookups.js';

export type VersionSelector = 'published' | 'latest' | number;

export interface PromptReference {
  /** The id or slug. */
  name: string;
  selector: VersionSelector;
}

/**
 * A version number as text: 1 to 9 digits, no sign, exponent or leading zero; undefined for anything
 * else. Bounded so that every number read stays within the store's integer column.
 */
export function parseVersionNumber(text: string): number | undefined {
  return /^[1-9]\d{0,8}$/.test(text) ? Number(text) : undefined;
}

/** The id or slug a reference names, without its `@latest` or `@<n>`. */
export function referenceName(reference: string): string {
  const at = reference.lastIndexOf('@');
  return at < 0 ? reference : reference.slice(0, at);
}

export function parsePromptReference(reference: string, what = 'prompt'): PromptReference {
  const at = reference.lastIndexOf('@');
  if (at < 0) return { name: reference, selector: 'published' };
  const name = reference.slice(0, at);
  const suffix = reference.slice(at + 1);
  if (suffix === 'latest') return { name, selector: 'latest' };
  const number = parseVersionNumber(suffix);
  if (number !== undefined) return { name, selector: number };
  throw new GatewayError(
    'prompt_not_found',
    `No version "${suffix}" of ${what} "${name}": use ${name}, ${name}@latest or ${name}@<version number>`,
    { param: 'promptId' },
  );
}

/** The version number a selector picks on a record with a latest and a published version. */
export function selectedVersion(
  record: { version: number; published_version: number },
  selector: VersionSelector,
): number {
  if (selector === 'published') return record.published_version;
  if (selector === 'latest') return record.version;
  return selector;
}

/** Where a prompt and its versions are read: the lookups cache for a call, the store (or a transaction)
 * for a check (`storedPrompts`). */
export type PromptSource = Pick<Lookups, 'prompt' | 'promptVersion'>;

/** The store as a source of prompts: what it (or the transaction) holds now. */
export function storedPrompts(store: Pick<Repositories, 'getPrompt' | 'getPromptVersion'>): PromptSource {
  return {
    prompt: (workspaceId, idOrSlug) => store.getPrompt(workspaceId, idOrSlug),
    promptVersion: (workspaceId, promptId, version) => store.getPromptVersion(workspaceId, promptId, version),
  };
}

/** What a reference (parsed) selects: the prompt it names, if any, and the version it selects, if that
 * prompt has it. */
export async function selectPromptVersion(
  source: PromptSource,
  workspaceId: string,
  { name, selector }: PromptReference,
): Promise<{ prompt?: StoredPrompt; number?: number; version?: StoredPromptVersion }> {
  const prompt = await source.prompt(workspaceId, name);
  if (!prompt) return {};
  const number = selectedVersion(prompt, selector);
  return { prompt, number, version: await source.promptVersion(workspaceId, prompt.id, number) };
}

/**
 * The version a prompt reference selects, as the store (or the transaction) holds it now; undefined when
 * the reference is not one, or names no prompt or version (which a check names on its own, if at all).
 */
export async function storedPromptVersion(
  store: Pick<Repositories, 'getPrompt' | 'getPromptVersion'>,
  workspaceId: string,
  reference: string,
): Promise<{ prompt: StoredPrompt; number: number; version: StoredPromptVersion } | undefined> {
  let parsed;
  try {
    parsed = parsePromptReference(reference);
  } catch (err) {
    if (err instanceof GatewayError) return undefined;
    throw err;
  }
  const { prompt, number, version } = await selectPromptVersion(storedPrompts(store), workspaceId, parsed);
  return prompt && number !== undefined && version ? { prompt, number, version } : undefined;
}
