import { GatewayError } from '../../core/errors.js';
import { joinUrl } from '../shared/url.js';
import type { ProviderTarget } from '../types.js';

export type VertexPublisher = 'google' | 'anthropic';

/**
 * A model's resource name as Vertex's REST API and SDKs write it: `publishers/{publisher}/models/{id}`,
 * also under `projects/{project}/locations/{location}/`.
 */
const RESOURCE_NAME =
  /^(?:projects\/[^/]+\/locations\/[^/]+\/)?publishers\/(?:google|anthropic)\/models\/([^/]+)$/;

/**
 * The id a model is addressed by in the URL, from any of the names users give it: the id itself
 * (`gemini-2.5-flash`, `claude-sonnet-4@20250514`), Gemini's `models/{id}`, or the resource name.
 */
export function vertexModelId(model: string): string {
  const resource = RESOURCE_NAME.exec(model);
  if (resource) return resource[1];
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/**
 * Vertex locations: `global`, the multi-regions `us` and `eu`, or a region such as `us-central1`,
 * `europe-west4`, `northamerica-northeast1`.
 */
const VERTEX_REGION_PATTERN = /^(global|us|eu|[a-z]+-[a-z]+\d+)$/;

/** The location of Vertex's global endpoint, the only one that serves Priority and Flex PayGo. */
export const VERTEX_GLOBAL_REGION = 'global';

/**
 * `https://{region}-aiplatform.googleapis.com`; the `global` location has no prefix, and the multi-regions
 * have their own endpoints (`https://aiplatform.us.rep.googleapis.com`). `custom_host` wins.
 */
export function vertexBaseUrl(target: ProviderTarget): string {
  if (target.custom_host) return target.custom_host;
  const region = vertexRegion(target);
  if (region === VERTEX_GLOBAL_REGION) return 'https://aiplatform.googleapis.com';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

/** `{base}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{action}`. */
export function vertexModelUrl(
  target: ProviderTarget,
  publisher: VertexPublisher,
  model: string,
  action: string,
): string {
  const project = requireKey(target, 'cloudb_project_id');
  const region = vertexRegion(target);
  const path =
    `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}` +
    `/publishers/${publisher}/models/${encodeURIComponent(model)}:${action}`;
  return joinUrl(vertexBaseUrl(target), path);
}

/** The region goes into the host name and the path: anything but a region name is refused, not sent. */
function vertexRegion(target: ProviderTarget): string {
  const region = requireKey(target, 'cloudb_region');
  if (!VERTEX_REGION_PATTERN.test(region)) {
    throw new GatewayError(
      'provider_config_error',
      `cloudb_region '${region}' is not a Vertex AI region name`,
      {
        param: 'cloudb_region',
      },
    );
  }
  return region;
}

function requireKey(target: ProviderTarget, key: 'cloudb_region' | 'cloudb_project_id'): string {
  const value = target[key];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new GatewayError('provider_config_error', `vertex-ai needs ${key}`, { param: key });
  }
  return value;
}
