import { GatewayError } from '../../core/errors.js';
import type { ProviderTarget } from '../types.js';
import { BEDROCK_REGION_PATTERN, bedrockRuntimeBaseUrl } from './bedrock-config.js';

export interface BedrockCredentials {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The region and credentials a Bedrock call needs, or a 400 naming the missing or wrong config key. */
export function bedrockCredentials(target: ProviderTarget): BedrockCredentials {
  const region = target.cloudc_region;
  if (!region) {
    throw new GatewayError('provider_config_error', 'bedrock needs cloudc_region', {
      param: 'cloudc_region',
    });
  }
  if (!BEDROCK_REGION_PATTERN.test(region)) {
    throw new GatewayError('provider_config_error', `cloudc_region '${region}' is not an AWS region name`, {
      param: 'cloudc_region',
    });
  }
  if (!target.cloudc_access_key_id) {
    throw new GatewayError('provider_config_error', 'bedrock needs cloudc_access_key_id', {
      param: 'cloudc_access_key_id',
    });
  }
  if (!target.cloudc_secret_access_key) {
    throw new GatewayError('provider_config_error', 'bedrock needs cloudc_secret_access_key', {
      param: 'cloudc_secret_access_key',
    });
  }
  return {
    region,
    accessKeyId: target.cloudc_access_key_id,
    secretAccessKey: target.cloudc_secret_access_key,
    ...(target.cloudc_session_token ? { sessionToken: target.cloudc_session_token } : {}),
  };
}

/** Bedrock Runtime in the target's region, or the target's custom_host. */
export function bedrockBaseUrl(target: ProviderTarget, region: string): string {
  return target.custom_host ?? bedrockRuntimeBaseUrl(region);
}
