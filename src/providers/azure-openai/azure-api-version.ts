/** `url` with `api-version` added, unless the URL names one already. */
export function withAzureApiVersion(url: string, apiVersion: string): string {
  if (/[?&]api-version=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}api-version=${encodeURIComponent(apiVersion)}`;
}
