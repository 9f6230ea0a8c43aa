/**
 * Client headers that choose which of a credential's accounts a call is made on, and billed to: OpenAI's
 * organization and project (`openai-organization`, `openai-project`), Google's quota project
 * (`x-goog-user-project`, Gemini's and Vertex AI's). With the client's own provider key (the target's
 * `clientKey`, resolve-target.ts) they are the client's to send; with a stored credential (a virtual key, a
 * catalog provider, a config's `api_key`, a service account or access keys with no key beside them) a
 * caller holding only a gateway key would pick another organisation or project of the key's owner with
 * them, so they stay behind, and the target's own settings (`vendora_organization`, `vendora_project`)
 * apply. Anthropic's, Azure's, Bedrock's and Cohere's keys have no such header: their workspace,
 * resource or account is the key's own.
 */
const ACCOUNT_HEADERS = ['openai-organization', 'openai-project', 'x-goog-user-project'];

/** `headers` as the provider may receive them: less the account headers unless `ownKey`. */
export function withoutAccountHeaders(
  headers: Record<string, string>,
  ownKey: boolean,
): Record<string, string> {
  if (ownKey || !ACCOUNT_HEADERS.some((name) => name in headers)) return headers;
  const kept = { ...headers };
  for (const name of ACCOUNT_HEADERS) delete kept[name];
  return kept;
}
