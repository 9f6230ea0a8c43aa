/**
 * `override_params.model` written `@<provider_slug>/<model>`: the reference gateway's model catalog names a
 * target's provider and model in one string, and configs made for it carry targets of nothing else
 * (`{"override_params": {"model": "@openai-prod/gpt-4o"}, "weight": 0.7}`). A node that names no provider
 * or virtual key of its own becomes the node `provider: "@openai-prod"` with the model `gpt-4o`, so routing,
 * inheritance and every credential check see the one form they know. A node that names its provider keeps
 * the model as written: that provider is sent it.
 */
import type { GatewayConfig } from './config-schema.js';

const CATALOG_MODEL = /^@([^/]+)\/(.+)$/s;

/** The catalog provider (`@openai-prod`) and the model (`gpt-4o`) a model written `@openai-prod/gpt-4o`
 * names, or undefined for any other model. */
export function catalogModel(model: unknown): { provider: string; model: string } | undefined {
  const match = typeof model === 'string' ? CATALOG_MODEL.exec(model) : null;
  return match === null ? undefined : { provider: `@${match[1]}`, model: match[2] };
}

/** Marks a node whose provider its model named, so an error about the provider names the model. */
const PROVIDER_FROM_MODEL: unique symbol = Symbol('provider from override_params.model');

/** The node with the provider its `@slug/model` names, or the node itself when it names none that way. */
export function withModelProvider(node: GatewayConfig): GatewayConfig {
  if (node.provider !== undefined || node.virtual_key !== undefined) return node;
  const overrides = node.override_params as Record<string, unknown> | undefined;
  const named = catalogModel(overrides?.model);
  if (named === undefined) return node;
  return Object.assign(
    { ...node, provider: named.provider, override_params: { ...overrides, model: named.model } },
    { [PROVIDER_FROM_MODEL]: true },
  );
}

/** The key of `node` an error about its `key` names: its model where the model named its provider (copies
 * of the node keep the mark). */
export function keyAsWritten(node: object, key: string): string {
  const fromModel = (node as { [PROVIDER_FROM_MODEL]?: boolean })[PROVIDER_FROM_MODEL] === true;
  return fromModel && key === 'provider' ? 'override_params.model' : key;
}
