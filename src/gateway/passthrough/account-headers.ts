/**
 * Client headers that choose which of a credential's accounts a call is made on, and billed to: OpenAI's
 * organization and project (`openai-organization`, `openai-project`), Google's quota project
 * (`x-goog-user-project`, Gemini's and Vertex AI's). With the caller's own credential — its provider key
 * (the target's `clientKey`, resolve-target.ts), or a key, service account or access keys written in the
 * config it sends with the request — they are the caller's to send, as the project a Vertex AI path names
 * is (vertex-ai-passthrough-project.ts); with a stored credential (a virtual key's, a catalog provider's, a
 * stored config's, whatever Authorization says beside it) a caller holding only a gateway key would pick
 * another organisation or project of the credential's owner with them, so they stay behind, and the
 * target's own settings (`vendora_organization`, `vendora_project`) apply. Anthropic's, Azure's, Bedrock's and Cohere's keys have no such header: their workspace,
 * resource or account is the key's own.
 */
const ACCOUNT_HEADERS = ['openai-organization', 'openai-project', 'x-goog-user-project'];

/** `headers` as the provider may receive them: less the account headers unless `ownCredential`. */
export function withoutAccountHeaders(
  headers: Record<string, string>,
  ownCredential: boolean,
): Record<string, string> {
  if (ownCredential || !ACCOUNT_HEADERS.some((name) => name in headers)) return headers;
  const kept = { ...headers };
  for (const name of ACCOUNT_HEADERS) delete kept[name];
  return kept;
}
