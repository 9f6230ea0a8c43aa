/**
 * Where an Azure OpenAI call goes: the resource's base URL, the deployment and the API version, from the
 * target's keys or its `deployments[]` list (the request's `model` picks a deployment by alias, else the
 * one marked `is_default`).
 */
import { GatewayError } from '../../core/errors.js';
import type { ProviderTarget } from '../types.js';

export interface AzureOpenAIAddress {
  /** `https://{resource}.openai.azure.com`, or custom_host. */
  base: string;
  deployment: string;
  apiVersion: string;
}

export function azureOpenAIBase(target: ProviderTarget): string {
  if (target.custom_host) return target.custom_host;
  const resource = target.cloudd_resource_name ?? target.resource_name;
  if (!resource) {
    throw new GatewayError(
      'provider_config_error',
      'Azure OpenAI needs the resource name: set `cloudd_resource_name` (or `resource_name`).',
      { param: 'cloudd_resource_name' },
    );
  }
  return `https://${hostLabel(resource, 'cloudd_resource_name', 'an Azure resource name')}.openai.azure.com`;
}

/** One label of a host name: letters, digits and inner hyphens, up to 63 characters. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * A key's value that becomes part of the provider's host name (a resource, an endpoint, a region), checked
 * to be one: anything else is the config's fault, refused naming the key, not sent to a host that cannot
 * exist and then taken for the provider being down.
 */
export function hostLabel(value: string, param: string, what: string): string {
  if (HOST_LABEL.test(value)) return value;
  throw new GatewayError(
    'provider_config_error',
    `${param} '${value}' is not ${what}: use letters, digits and hyphens.`,
    { param },
  );
}

export function resolveAzureOpenAIAddress(target: ProviderTarget, model: unknown): AzureOpenAIAddress {
  const base = azureOpenAIBase(target);
  if (target.deployments?.length) {
    const chosen =
      target.deployments.find((deployment) => deployment.alias === model) ??
      target.deployments.find((deployment) => deployment.is_default === true);
    if (!chosen) {
      throw new GatewayError(
        'invalid_body',
        `No Azure deployment has the alias \`${String(model)}\` and none is marked is_default.`,
        { param: 'model' },
      );
    }
    return { base, deployment: chosen.deployment_id, apiVersion: chosen.api_version };
  }
  const deployment = target.cloudd_deployment_id ?? target.cloudd_deployment_name ?? target.deployment_id;
  if (!deployment) {
    throw new GatewayError(
      'provider_config_error',
      'Azure OpenAI needs the deployment: set `cloudd_deployment_name` (or `deployment_id`, or `deployments`).',
      { param: 'cloudd_deployment_name' },
    );
  }
  const apiVersion = target.cloudd_api_version ?? target.api_version;
  if (!apiVersion) {
    throw new GatewayError(
      'provider_config_error',
      'Azure OpenAI needs the API version: set `cloudd_api_version` (or `api_version`).',
      { param: 'cloudd_api_version' },
    );
  }
  return { base, deployment, apiVersion };
}
