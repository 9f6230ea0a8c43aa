/**
 * A target call as rate-limit policies see it: each key's values, the canonical one first (what a group
 * is counted by), then the other names that match it. Per target, because `provider`, `model` and
 * `virtual_key` are the target's.
 */
import type { TargetCall } from '../pipeline-types.js';
import type { CallFacts } from './policy-match.js';

export function callFacts(call: TargetCall): CallFacts {
  const { ctx } = call.run.call;
  const adapterId = call.resolved.adapter.id;
  // A stored credential is counted by its slug, and matched by its slug or its id, however the call named
  // it: a node may give either, and a limit must not be side-stepped by writing the other.
  const credential = call.resolved.credential;
  const virtualKey = credential?.kind === 'virtual_key' ? [credential.slug, credential.id] : undefined;
  const catalog = credential?.kind === 'provider' ? [`@${credential.slug}`, `@${credential.id}`] : [];
  return (key) => {
    switch (key) {
      case 'api_key':
        return [ctx.apiKey.id];
      case 'workspace_id':
        return [ctx.apiKey.workspace_id];
      case 'organisation_id':
        return [ctx.apiKey.organisation_id];
      case 'virtual_key':
        return virtualKey;
      case 'provider':
        return [adapterId, ...catalog];
      case 'config':
        return ctx.storedConfig ? [ctx.storedConfig.id, ctx.storedConfig.slug] : undefined;
      case 'prompt':
        return ctx.prompt ? [ctx.prompt.id, ctx.prompt.slug] : undefined;
      case 'model': {
        const model = call.model;
        if (model === undefined) return undefined;
        return [`@${adapterId}/${model}`, ...catalog.map((name) => `${name}/${model}`), model];
      }
      default: {
        if (!key.startsWith('metadata.')) return undefined;
        // Own entries only: `constructor` or `toString` would otherwise be found on every call's metadata
        // object, and count calls that never sent them in one shared group.
        const name = key.slice('metadata.'.length);
        return Object.hasOwn(ctx.metadata, name) ? [ctx.metadata[name]] : undefined;
      }
    }
  };
}
