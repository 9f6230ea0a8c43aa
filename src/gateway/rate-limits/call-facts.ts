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
  const node = call.node as { provider?: unknown; virtual_key?: unknown };
  const catalogSlug =
    typeof node.provider === 'string' && node.provider.startsWith('@') ? node.provider : undefined;
  return (key) => {
    switch (key) {
      case 'api_key':
        return [ctx.apiKey.id];
      case 'workspace_id':
        return [ctx.apiKey.workspace_id];
      case 'organisation_id':
        return [ctx.apiKey.organisation_id];
      case 'virtual_key':
        return typeof node.virtual_key === 'string' ? [node.virtual_key] : undefined;
      case 'provider':
        return catalogSlug ? [adapterId, catalogSlug] : [adapterId];
      case 'config':
        return ctx.storedConfig ? [ctx.storedConfig.id, ctx.storedConfig.slug] : undefined;
      case 'prompt':
        return ctx.prompt ? [ctx.prompt.id, ctx.prompt.slug] : undefined;
      case 'model': {
        const model = call.model;
        if (model === undefined) return undefined;
        const names = [`@${adapterId}/${model}`];
        if (catalogSlug) names.push(`${catalogSlug}/${model}`);
        names.push(model);
        return names;
      }
      default: {
        if (!key.startsWith('metadata.')) return undefined;
        const value = ctx.metadata[key.slice('metadata.'.length)];
        return value === undefined ? undefined : [value];
      }
    }
  };
}
