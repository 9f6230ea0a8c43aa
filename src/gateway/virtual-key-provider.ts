/**
 * A virtual key carries its provider. A config node (or the provider header) naming another `provider`
 * beside `virtual_key` would send the key's stored secret to that provider's host, so it is refused —
 * when a config is stored (named-documents.ts) and when a call resolves its target (resolve-target.ts),
 * which also covers configs stored before this rule. Naming the key's own provider (or an alias of it)
 * is allowed: it changes nothing.
 */
import { findAdapter } from '../providers/registry.js';

/**
 * Why `named`, given beside virtual key `slug` whose provider is `keyProvider` (its canonical id), cannot
 * be used; undefined when it is the key's own provider.
 */
export function providerBesideVirtualKey(
  named: string,
  slug: string,
  keyProvider: string,
): string | undefined {
  const canonical = findAdapter(named)?.id ?? named;
  if (canonical === (findAdapter(keyProvider)?.id ?? keyProvider)) return undefined;
  return (
    `"${named}" is not the provider of virtual key "${slug}" (${keyProvider}): a virtual key's credentials ` +
    `go only to its own provider; remove provider, or name "${keyProvider}"`
  );
}
