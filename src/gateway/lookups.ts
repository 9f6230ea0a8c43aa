/**
 * Store reads on the hot path, through an in-memory cache: API keys, provider credentials, stored
 * configs, stored guardrails, stored prompts and partials with their versions, and a workspace's active rate-limit policies. The store announces every committed change (`store.onChange`, wired to
 * `applyChange` in gateway-server.ts), so a revoked key stops working at once on this node, and on the
 * other nodes as soon as the invalidation published through Redis reaches them (a publish Redis did not
 * take is sent again once the connection is back); the TTL bounds staleness if a message is lost: an entry
 * lives the TTL from when its read began, so a change never announced is stale at most the TTL after it
 * committed. A TTL of 0 keeps nothing: every read goes to the store.
 */
import { LRUCache } from 'lru-cache';
import type {
  ApiKey,
  ProviderCredential,
  RateLimitPolicy,
  Store,
  StoreChange,
  StoredConfig,
  StoredGuardrail,
  StoredPrompt,
  StoredPromptPartial,
  StoredPromptPartialVersion,
  StoredPromptVersion,
} from '../store/types.js';
import { invalidationFor, type InvalidationEvent } from './invalidation.js';

const MISSING = Symbol('missing');
/** How often a key's `last_used_at` is written while it is in use. */
const KEY_USE_WRITE_INTERVAL_MS = 60_000;
type Cached<T> = T | typeof MISSING;

export interface Lookups {
  apiKey(value: string): Promise<ApiKey | undefined>;
  /** The key if the cache holds it now (null: held as unknown); undefined when it must be loaded
   * (`apiKey`). Every request asks this first: nearly all find their key cached. */
  cachedApiKey(value: string): ApiKey | null | undefined;
  /** The key was used now: its `last_used_at` is written, at most once a minute per key and node, in
   * the background (a failed write is only tried again a minute later). */
  keyUsed(key: ApiKey): void;
  credential(
    workspaceId: string,
    kind: ProviderCredential['kind'],
    slug: string,
  ): Promise<ProviderCredential | undefined>;
  config(workspaceId: string, idOrSlug: string): Promise<StoredConfig | undefined>;
  /** The stored guardrail a config's `"<slug>"` guardrail item names (its id works too); undefined
   * when the workspace has none by that name (never stored, or deleted). The answer is the cached
   * object itself, shared by every call: read it, never change it. */
  guardrailBySlug(workspaceId: string, slug: string): Promise<StoredGuardrail | undefined>;
  /** A stored prompt by id or slug, and one of its versions (by the prompt's id). Cached objects, shared
   * by every call (a version's parsed template is kept with it): read them, never change them. */
  prompt(workspaceId: string, idOrSlug: string): Promise<StoredPrompt | undefined>;
  promptVersion(
    workspaceId: string,
    promptId: string,
    version: number,
  ): Promise<StoredPromptVersion | undefined>;
  /** The same for prompt partials. */
  promptPartial(workspaceId: string, idOrSlug: string): Promise<StoredPromptPartial | undefined>;
  promptPartialVersion(
    workspaceId: string,
    partialId: string,
    version: number,
  ): Promise<StoredPromptPartialVersion | undefined>;
  /** The workspace's active rate-limit policies, oldest first. The answer is the cached array itself,
   * shared by every call until a change of the workspace's policies replaces it: read it, never change it. */
  rateLimitPolicies(workspaceId: string): Promise<readonly RateLimitPolicy[]>;
  /** The workspace's active rate-limit policies if they are cached now; undefined when they must be
   * loaded (`rateLimitPolicies`). Every call asks this first: most find them cached, often none. */
  cachedRateLimitPolicies(workspaceId: string): readonly RateLimitPolicy[] | undefined;
  /** A change committed through this node's store: forget what it makes stale, here and (through
   * `publish`) on every other node. */
  applyChange(change: StoreChange): void;
  /** Apply an invalidation another node published. */
  applyRemote(event: InvalidationEvent): void;
}

export function createLookups(
  store: Store,
  ttlMs: number,
  publish: (event: InvalidationEvent) => void = () => undefined,
): Lookups {
  // A TTL of 0 turns the cache off (LRUCache would read it as "no TTL", and keep entries for ever).
  const caching = ttlMs > 0;
  const keys = new LRUCache<string, Cached<ApiKey>>({ max: 10_000, ttl: ttlMs });
  // Unknown keys are remembered briefly, so a client hammering with a bad key does not hammer the store,
  // and apart from the keys that exist, so a flood of different bad keys cannot push those out.
  const missingKeys = new LRUCache<string, Cached<ApiKey>>({ max: 10_000, ttl: ttlMs });
  const records = new LRUCache<string, Cached<object>>({
    max: 10_000,
    ttl: ttlMs,
  });
  const missingTtl = Math.min(ttlMs, 5_000);
  // Loads under way, by cache and entry, with the generations they started in: requests arriving together
  // for what is not cached wait for one read, unless a change of that cache came since it started.
  const pending = new Map<object, Map<string, { found: number; missed: number; load: Promise<unknown> }>>();
  // When each key's last use was last written (Date.now()), by key id.
  const usedWrittenAt = new Map<string, number>();
  // Counts each cache's invalidations. A load that an invalidation of the cache its answer goes to
  // overtook may have read the old row: its answer is returned but not cached, or it would be served until
  // the TTL ran out. An invalidation of another cache (another workspace's records, a key created while a
  // key in use is read) leaves it to be cached.
  const generations = new Map<object, number>([
    [keys, 0],
    [missingKeys, 0],
    [records, 0],
  ]);
  const generationOf = (cache: object) => generations.get(cache) ?? 0;
  const invalidated = (...caches: object[]) => {
    for (const cache of caches) generations.set(cache, generationOf(cache) + 1);
  };

  function through<T extends object>(
    cache: LRUCache<string, Cached<T>>,
    key: string,
    load: () => Promise<T | undefined>,
    missing: LRUCache<string, Cached<T>> = cache,
  ): Promise<T | undefined> {
    const hit = cache.get(key) ?? (missing === cache ? undefined : missing.get(key));
    if (hit !== undefined) return Promise.resolve(hit === MISSING ? undefined : hit);
    let loads = pending.get(cache);
    if (!loads) pending.set(cache, (loads = new Map()));
    const running = loads.get(key);
    const found = generationOf(cache);
    const missed = generationOf(missing);
    if (running && running.found === found && running.missed === missed) {
      return running.load as Promise<T | undefined>;
    }
    // An entry lives its TTL from when its read began, not from when the answer came: a read under way
    // when a change committed (and whose announcement never came) is then stale at most the TTL after it.
    const started = performance.now();
    let loading: Promise<T | undefined>;
    try {
      loading = load();
    } catch (err) {
      loading = Promise.reject(err as Error);
    }
    const entry = {
      found,
      missed,
      load: loading.then(
        (value) => {
          if (loads.get(key) === entry) loads.delete(key);
          if (!caching) return value;
          const elapsed = performance.now() - started;
          if (value === undefined) {
            const ttl = Math.floor(missingTtl - elapsed);
            if (generationOf(missing) === missed && ttl >= 1) missing.set(key, MISSING, { ttl });
          } else {
            const ttl = Math.floor(ttlMs - elapsed);
            if (generationOf(cache) === found && ttl >= 1) cache.set(key, value, { ttl });
          }
          return value;
        },
        (err: unknown) => {
          if (loads.get(key) === entry) loads.delete(key);
          throw err;
        },
      ),
    };
    loads.set(key, entry);
    return entry.load;
  }

  function drop(event: InvalidationEvent): void {
    if (event.kind === 'all') {
      invalidated(keys, missingKeys, records);
      keys.clear();
      missingKeys.clear();
      records.clear();
      return;
    }
    if (event.kind === 'api-keys') {
      if (event.unknownOnly) invalidated(missingKeys);
      else {
        // A load under way may read the key before the change: none under way is cached.
        invalidated(keys, missingKeys);
        const { keyId, workspaceId } = event;
        if (keyId === undefined && workspaceId === undefined) keys.clear();
        else {
          // Only the entries of the key changed (or of the workspace deleted): the other keys in use stay.
          const stale: string[] = [];
          keys.forEach((cached, value) => {
            if (cached !== MISSING && (cached.id === keyId || cached.workspace_id === workspaceId)) {
              stale.push(value);
            }
          });
          for (const value of stale) keys.delete(value);
        }
      }
      // A rotated key's new value may be held as unknown, as a created key's.
      missingKeys.clear();
      return;
    }
    invalidated(records);
    const prefix = `${event.workspaceId}\u0000`;
    for (const key of records.keys()) if (key.startsWith(prefix)) records.delete(key);
  }

  return {
    apiKey: (value) => through(keys, value, () => store.findApiKeyByValue(value), missingKeys),
    cachedApiKey(value) {
      const hit = keys.get(value) ?? missingKeys.get(value);
      return hit === undefined ? undefined : hit === MISSING ? null : hit;
    },
    keyUsed(key) {
      const now = Date.now();
      const written = usedWrittenAt.get(key.id);
      if (written !== undefined && now - written < KEY_USE_WRITE_INTERVAL_MS) return;
      if (usedWrittenAt.size >= 10_000) usedWrittenAt.clear();
      usedWrittenAt.set(key.id, now);
      store.touchApiKey(key.id, Math.floor(now / 1000)).catch(() => undefined);
    },
    credential: (workspaceId, kind, slug) =>
      through(records, `${workspaceId}\u0000${kind}\u0000${slug}`, () =>
        store.getCredential(workspaceId, kind, slug),
      ) as Promise<ProviderCredential | undefined>,
    config: (workspaceId, idOrSlug) =>
      through(records, `${workspaceId}\u0000config\u0000${idOrSlug}`, () =>
        store.getConfig(workspaceId, idOrSlug),
      ) as Promise<StoredConfig | undefined>,
    guardrailBySlug: (workspaceId, slug) =>
      through(records, `${workspaceId}\u0000guardrail\u0000${slug}`, () =>
        store.getGuardrail(workspaceId, slug),
      ) as Promise<StoredGuardrail | undefined>,
    prompt: (workspaceId, idOrSlug) =>
      through(records, `${workspaceId}\u0000prompt\u0000${idOrSlug}`, () =>
        store.getPrompt(workspaceId, idOrSlug),
      ) as Promise<StoredPrompt | undefined>,
    // Versions never change, but a deleted prompt's versions must go with it: cached like the rest.
    promptVersion: (workspaceId, promptId, version) =>
      through(records, `${workspaceId}\u0000prompt-version\u0000${promptId}\u0000${version}`, () =>
        store.getPromptVersion(workspaceId, promptId, version),
      ) as Promise<StoredPromptVersion | undefined>,
    promptPartial: (workspaceId, idOrSlug) =>
      through(records, `${workspaceId}\u0000partial\u0000${idOrSlug}`, () =>
        store.getPromptPartial(workspaceId, idOrSlug),
      ) as Promise<StoredPromptPartial | undefined>,
    promptPartialVersion: (workspaceId, partialId, version) =>
      through(records, `${workspaceId}\u0000partial-version\u0000${partialId}\u0000${version}`, () =>
        store.getPromptPartialVersion(workspaceId, partialId, version),
      ) as Promise<StoredPromptPartialVersion | undefined>,
    rateLimitPolicies: async (workspaceId) =>
      ((await through(records, rateLimitsKey(workspaceId), async () => {
        const { data } = await store.listRateLimitPolicies({ workspace_id: workspaceId, status: 'active' });
        return data;
      })) as readonly RateLimitPolicy[] | undefined) ?? [],
    cachedRateLimitPolicies(workspaceId) {
      const hit = records.get(rateLimitsKey(workspaceId));
      return hit === undefined ? undefined : hit === MISSING ? [] : (hit as readonly RateLimitPolicy[]);
    },
    applyChange(change) {
      for (const event of invalidationFor(change)) {
        drop(event);
        publish(event);
      }
    },
    applyRemote: drop,
  };
}

function rateLimitsKey(workspaceId: string): string {
  return `${workspaceId}\u0000rate-limits`;
}
