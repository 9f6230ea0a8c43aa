import type { ProviderCapabilities } from '../types.js';
import { GEMINI_STOP_SEQUENCES, geminiNotes, geminiParameters } from '../google/index.js';
import { isAnthropicModel } from './vertex-ai-anthropic.js';
import { vertexEmbeddingInputsPerCall, vertexEmbeddingTokensPerCall } from './vertex-ai-embeddings.js';
import { vertexModelOf } from './vertex-ai-operations.js';
import { vertexModelId } from './vertex-ai-urls.js';

export const vertexAICapabilities: ProviderCapabilities = {
  endpoints: ['chat', 'embeddings', 'messages'],
  streaming: true,
  tools: true,
  parallelToolCalls: true,
  images: true,
  jsonSchema: true,
  thinking: true,
  promptCaching: true,
  // Gemini's candidateCount gives n choices; Claude returns one, as on the anthropic adapter.
  n: (req) => (isAnthropicModel(vertexModelOf(req)) ? 'fanout' : 'native'),
  // Gemini's bound; Claude's stop_sequences have none so small, as on the anthropic adapter.
  stopSequences: (model) => (isAnthropicModel(vertexModelId(model)) ? undefined : GEMINI_STOP_SEQUENCES),
  // :predict takes one instance for gemini-embedding-001, 250 for the others; :embedContent one content.
  embeddingInputsPerCall: (req) => vertexEmbeddingInputsPerCall(vertexModelOf(req)),
  // :predict refuses more than 20,000 input tokens in one call.
  embeddingTokensPerCall: (req) => vertexEmbeddingTokensPerCall(vertexModelOf(req)),
  parameters: geminiParameters,
  credentials: [
    'cloudb_project_id',
    'cloudb_region',
    'cloudb_service_account_json',
    'cloudb_request_type',
    'cloudb_shared_request_type',
    'api_key',
    'custom_host',
  ],
  notes: [
    'Gemini models: publishers/google …:generateContent / :streamGenerateContent?alt=sse, translated as for google.',
    "Models named claude-* (or anthropic.claude-*, sent without the prefix) go to publishers/anthropic …:rawPredict / :streamRawPredict with the Anthropic Messages body (anthropic_version vertex-2023-10-16) and follow the anthropic adapter's parameter handling: n > 1 is fanned out by the gateway (Gemini models return n candidates natively).",
    'Auth: an access token from cloudb_service_account_json (JWT-bearer grant at its token_uri, scope cloud-platform, cached until 5 minutes before expiry), else api_key as a bearer token. The token_uri is held to GATEWAY_CUSTOM_HOST_POLICY as custom_host is (400 custom_host_refused naming cloudb_service_account_json.token_uri, as written and where its name resolves to); a redirect from it is not followed (502 token_exchange_failed), and of a refusal the client is told only the HTTP status and an OAuth error code with its description.',
    'Region global uses https://aiplatform.googleapis.com, the multi-regions us and eu https://aiplatform.{us|eu}.rep.googleapis.com, others https://{region}-aiplatform.googleapis.com.',
    "Models may also be named as Vertex resources (publishers/{google|anthropic}/models/{id}, with or without projects/{project}/locations/{location}/ before it) or as models/{id}; the id alone is sent. A model naming a project other than the target's is a 403 forbidden naming model, and an id with a separator or a . / .. segment a 400 naming model, before Vertex is called.",
    "Embeddings use publishers/google …:predict (text-embedding-*, text-multilingual-embedding-*, gemini-embedding-001), or :embedContent for the Gemini embedding models after gemini-embedding-001 (gemini-embedding-2…), as Google's SDK routes them; usage counts the tokens Vertex reports. A call takes one input for Gemini embedding models and 250 for the others, and :predict at most 20,000 input tokens in all, so the gateway sends a longer input list as several calls within both bounds (tokens estimated generously: UTF-8 bytes / 3), 8 at a time, and merges the answers in input order.",
    "Pass-through paths are appended to {base}/v1. With a stored credential (a virtual key's, a catalog provider's, a stored config's), every project the path names (projects/{project}/…) must be the credential's own (its cloudb_project_id, else its service account's project_id; a config may not set another beside a virtual key or @slug): another is a 403 forbidden before any token exchange, and a path with an encoded separator (%2F, %5C) or a . or .. segment once decoded a 400 invalid_path. Its body (JSON, read whole before any token exchange) is held to that project too: every string written as a resource name (projects/{project}/…, //service/projects/…, a googleapis.com URL, bq://{project}…), in whatever field outside the conversation's text, function arguments and results and schemas, naming another project is a 403 forbidden naming the field (a cachedContent, a RAG corpus, a batch job's model or bq:// output); gs:// buckets name no project and are not judged. The caller's own credentials (its Authorization, a service account in the config it sends) go to any project.",
    "Gemini answers name the quota that served them (usageMetadata.trafficType, on every event of a stream): kept as usage.traffic_type (not OpenAI's), and a call served from Provisioned Throughput (PROVISIONED_THROUGHPUT) has its tokens priced at 0, as they are prepaid; one served on Priority PayGo (ON_DEMAND_PRIORITY) or Flex PayGo (ON_DEMAND_FLEX) is priced on the priority tier (the model's own priority prices, else its standard prices) or the flex tier (the model's own flex prices, else half). Claude answers name none: a Claude call is priced so only when its target asks for dedicated capacity.",
    'cloudb_request_type (dedicated | shared) is sent as X-Vertex-AI-LLM-Request-Type on every call of the target, pass-through included, over a client header of that name forward_headers passes on: dedicated is Provisioned Throughput only (429 beyond it), shared pay-as-you-go only.',
    'cloudb_shared_request_type (priority | flex) is sent as X-Vertex-AI-LLM-Shared-Request-Type the same way: the pay-as-you-go that serves what Provisioned Throughput does not (everything, with cloudb_request_type shared) is Priority PayGo or Flex PayGo. Vertex serves them on the global endpoint only: a cloudb_region other than global is a 400 naming the key, and so is cloudb_request_type dedicated beside it (when the config or the virtual key that gives both is stored or read, else when the call is made).',
    ...geminiNotes,
  ],
};
