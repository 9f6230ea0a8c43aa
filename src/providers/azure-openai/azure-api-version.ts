/**
 * `url` with `api-version` added, unless the URL names one already or is one of Azure's v1 API
 * (`…/openai/v1/…`): that API takes no dated version, and answers 400 to one ("api-version query parameter
 * is not allowed when using /v1 path").
 */
export function withAzureApiVersion(url: string, apiVersion: string): string {
  const [path, query] = url.split('?', 2);
  if (/\/openai\/v1(?:\/|$)/.test(path) || (query !== undefined && /(?:^|&)api-version=/.test(query))) {
    return url;
  }
  return `${url}${query !== undefined ? '&' : '?'}api-version=${encodeURIComponent(apiVersion)}`;
}
