import { Sha256 } from '@aws-crypto/sha256-js';
import type { UpstreamRequest } from '../types.js';
import { BEDROCK_SIGNING_SERVICE } from './bedrock-config.js';
import type { BedrockCredentials } from './bedrock-target.js';

/**
 * Signs a request with AWS SigV4 over its final URL (custom_host included) and exact body bytes. The
 * `host` header is signed but not returned: the HTTP client derives the same value from the URL.
 */
export async function signBedrockRequest(
  request: UpstreamRequest,
  credentials: BedrockCredentials,
  signingDate?: Date,
): Promise<UpstreamRequest> {
  const url = new URL(request.url);
  url.pathname = uriPath(url.pathname);
  const { SignatureV4 } = await loadSigner();
  const signer = new SignatureV4({
    service: BEDROCK_SIGNING_SERVICE,
    region: credentials.region,
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
    },
    sha256: Sha256,
  });
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const existing = query[key];
    query[key] =
      existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      ...(request.body !== undefined ? { body: request.body } : {}),
    },
    signingDate ? { signingDate } : undefined,
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name.toLowerCase() !== 'host') headers[name.toLowerCase()] = String(value);
  }
  return { ...request, url: url.href, headers };
}

/**
 * The path with every character a URI path cannot hold raw (`[`, `]`, `|`, `^`, a `%` that begins no
 * escape…) percent-encoded, as an AWS SDK sends it. AWS reads the canonical path as that path encoded once
 * more; the signer encodes the path it is given once, so the path signed and sent must already be the
 * encoded one, or a raw `|` is signed as `%7C` where AWS reads `%257C`.
 */
function uriPath(pathname: string): string {
  return pathname.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (char) =>
    char === '%' ? '%25' : encodeURIComponent(char),
  );
}

let signerModule: Promise<typeof import('@smithy/signature-v4')> | undefined;

/** The SigV4 signer, loaded on the first Bedrock call rather than at start (and then kept). */
function loadSigner(): Promise<typeof import('@smithy/signature-v4')> {
  return (signerModule ??= import('@smithy/signature-v4'));
}
