/**
 * A target's settings that choose the model behind its address: the address (custom host, resource) is
 * one Azure endpoint for all its deployments, and the body's `model` is whatever the client names, so two
 * deployments asked with the same model name are told apart only by these. The cache keys and the circuit
 * breaker's key hold them. Secrets are never among them.
 */
export const TARGET_FIELDS = [
  'resource_name',
  'cloudd_resource_name',
  'deployment_id',
  'cloudd_deployment_id',
  'cloudd_deployment_name',
  'cloudd_endpoint_name',
  'cloudd_model_name',
  'cloudd_deployment_type',
  'api_version',
  'cloudd_api_version',
  'deployments',
] as const;

/** The TARGET_FIELDS a target sets; undefined (left out of the key) when it sets none. */
export function targetPart(target: object | undefined): Record<string, unknown> | undefined {
  if (!target) return undefined;
  const fields = target as Readonly<Record<string, unknown>>;
  let out: Record<string, unknown> | undefined;
  for (const field of TARGET_FIELDS) {
    if (fields[field] !== undefined) (out ??= {})[field] = fields[field];
  }
  return out;
}
