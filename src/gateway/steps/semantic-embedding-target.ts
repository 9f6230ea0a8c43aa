/**
 * The embedding target of a semantic cache (docs/cache.md, "The semantic cache"): the config's
 * `cache.embedding`, else the settings'. A semantic cache without one is a config error, refused with the
 * same 400 on every request its config meets, whether or not that request would be embedded: the cache
 * step asks before it serves anything, so an endpoint or a message the cache compares exactly does not
 * hide the error until a request that is compared by meaning comes.
 */
import { GatewayError } from '../../core/errors.js';
import type { TargetConfig } from '../config/index.js';
import type { EmbeddingTarget } from '../pipeline-types.js';
import type { TargetCall } from './target-step.js';

export type SemanticCacheConfig = NonNullable<TargetConfig['cache']>;

/** The embedding target of a config's cache, else the settings'; a 400 naming the field when neither has one. */
export function embeddingTargetOf(call: TargetCall, cache: SemanticCacheConfig): EmbeddingTarget {
  const { settings } = call.run.deps;
  const named = cache.embedding;
  const model = named?.model ?? settings.semanticCacheEmbeddingModel;
  if (named?.config !== undefined) return { config: named.config, model };
  const virtualKey = named?.virtual_key ?? settings.semanticCacheVirtualKey;
  if (virtualKey !== undefined) return { virtual_key: virtualKey, model };
  const param = call.path ? `config.${call.path}.cache.embedding` : 'config.cache.embedding';
  throw new GatewayError(
    'invalid_config',
    'cache.mode semantic needs an embedding model: set cache.embedding.virtual_key or cache.embedding.config',
    { param },
  );
}
