/**
 * Store reads on the hot path, through an in-memory cache: API keys, provider credentials and stored
 * configs. The management API invalidates entries when it changes them, so a revoked key stops working at
 * once on this node, and on the other nodes as soon as the invalidation published through Redis reaches
 * them; the TTL bounds staleness if a message is lost.
 */
import { LRUCache } from 'lru-cache';
import type { ApiKey, ProviderCredential, Store, StoredConfig } from '../store/types.js';
import type { InvalidationEvent } from './invalidation.js';

const MISSING = Symbol('missing');
type Cached<T> = T | typeof MISSING;

export interface Lookups {
  apiKey(value: string): Promise<ApiKey | undefined>;
  credential(
    workspaceId: string,
    kind: ProviderCredential['kind'],
    slug: string,
  ): Promise<ProviderCredential | undefined>;
  config(workspaceId: string, idOrSlug: string): Promise<StoredConfig | undefined>;
  /** Forget everything cached for a workspace (or every key, for API keys), here and on every other
   * node (through `publish`). */
  invalidateApiKeys(): void;
  invalidateWorkspace(workspaceId: string): void;
  /** Apply an invalidation another node published. */
  applyRemote(event: InvalidationEvent): void;
}

export function createLookups(
  store: Store,
  ttlMs: number,
  publish: (event: InvalidationEvent) => void = () => undefined,
): Lookups {
  const keys = new LRUCache<string, Cached<ApiKey>>({ max: 10_000, ttl: ttlMs });
  const records = new LRUCache<string, Cached<ProviderCredential | StoredConfig>>({
    max: 10_000,
    ttl: ttlMs,
  });
  // Unknown keys are remembered briefly, so a client hammering with a bad key does not hammer the store.
  const missingTtl = Math.min(ttlMs, 5_000);

  async function through<T extends object>(
    cache: LRUCache<string, Cached<T>>,
    key: string,
    load: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const hit = cache.get(key);
    if (hit !== undefined) return hit === MISSING ? undefined : hit;
    const value = await load();
    if (value === undefined) cache.set(key, MISSING, { ttl: missingTtl });
    else cache.set(key, value);
    return value;
  }

  const dropApiKeys = () => keys.clear();
  const dropWorkspace = (workspaceId: string) => {
    const prefix = `${workspaceId}\u0000`;
    for (const key of records.keys()) if (key.startsWith(prefix)) records.delete(key);
  };

  return {
    apiKey: (value) => through(keys, value, () => store.findApiKeyByValue(value)),
    credential: (workspaceId, kind, slug) =>
      through(records, `${workspaceId}\u0000${kind}\u0000${slug}`, () =>
        store.getCredential(workspaceId, kind, slug),
      ) as Promise<ProviderCredential | undefined>,
    config: (workspaceId, idOrSlug) =>
      through(records, `${workspaceId}\u0000config\u0000${idOrSlug}`, () =>
        store.getConfig(workspaceId, idOrSlug),
      ) as Promise<StoredConfig | undefined>,
    invalidateApiKeys() {
      dropApiKeys();
      publish({ kind: 'api-keys' });
    },
    invalidateWorkspace(workspaceId) {
      dropWorkspace(workspaceId);
      publish({ kind: 'workspace', workspaceId });
    },
    applyRemote(event) {
      if (event.kind === 'api-keys') dropApiKeys();
      else dropWorkspace(event.workspaceId);
    },
  };
}
