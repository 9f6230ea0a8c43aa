/**
 * The provider adapter contract. An adapter is pure translation: it builds the upstream request from an
 * OpenAI-shaped one, and turns the upstream's response, stream events and errors back into OpenAI shapes.
 * It does no I/O of its own; the pipeline sends the request, reads the body, applies deadlines, retries and
 * fallbacks. The one exception is `authenticate`, an optional token exchange (Vertex service accounts) kept
 * in its own module and called by the pipeline before `buildRequest`; even it sends through the pipeline's
 * client (`OwnRequestSender`), so the custom-host policy holds for it. Each operation (chat, completions,
 * embeddings) has its own handler; the registry's `operationOf` finds it or refuses the call.
 */
import type { AbortSignalLike } from '../core/abort.js';
import type { ProviderError } from '../core/errors.js';
import type { MessagesStreamEvent } from '../core/messages-types.js';
import type { ResponsesStreamEvent } from '../core/responses-types.js';
import type { ChatCompletionChunk, TextCompletion, Usage } from '../core/openai-types.js';
import type {
  ChatCompletionRequest,
  CompletionRequest,
  EmbeddingRequest,
  MessagesCountTokensRequest,
  MessagesRequest,
} from '../core/schemas/index.js';
import type { ResponsesRequest } from '../core/schemas/responses-request.js';

/** Each model operation and the body it takes: the type its schema gives (core/schemas), validated once at
 * the route and, with a target's override_params, once more before the target is called. */
export interface RequestBodies {
  chat: ChatCompletionRequest;
  completions: CompletionRequest;
  embeddings: EmbeddingRequest;
  /** Anthropic's Messages API (`/v1/messages`): native where a provider has it, else translated to chat. */
  messages: MessagesRequest;
  /** Anthropic's `/v1/messages/count_tokens`. */
  count_tokens: MessagesCountTokensRequest;
  /** OpenAI's Responses API (`/v1/responses`) as a provider that has it natively is called: the whole
   * conversation in `input`, `store: false` (gateway/responses/). Any other target gets it as chat. */
  responses: ResponsesRequest;
}

export type EndpointKind = keyof RequestBodies;

export type RequestBody<K extends EndpointKind = EndpointKind> = RequestBodies[K];

export interface AzureDeployment {
  deployment_id: string;
  alias: string;
  api_version: string;
  is_default?: boolean;
}

/**
 * How to reach one provider: the config keys of the spec that carry credentials and addresses, after a
 * virtual key or `@slug` has been resolved and parent settings inherited. Names are the spec's own.
 */
export interface ProviderTarget {
  /** Canonical adapter id, e.g. `openai`, `anthropic`, `bedrock`. */
  provider: string;
  api_key?: string;
  custom_host?: string;
  vendora_organization?: string;
  vendora_project?: string;
  cloudb_project_id?: string;
  cloudb_region?: string;
  cloudb_service_account_json?: Record<string, unknown>;
  /** Which capacity Vertex AI serves the calls from: `dedicated`, Provisioned Throughput only; `shared`,
   * pay-as-you-go only; absent, Provisioned Throughput first and the rest pay-as-you-go. */
  cloudb_request_type?: 'dedicated' | 'shared';
  /** Which pay-as-you-go Vertex AI serves the calls on, beyond Provisioned Throughput: `priority` (Priority
   * PayGo) or `flex` (Flex PayGo), the global endpoint only; absent, standard pay-as-you-go. */
  cloudb_shared_request_type?: 'priority' | 'flex';
  cloudc_access_key_id?: string;
  cloudc_secret_access_key?: string;
  cloudc_region?: string;
  cloudc_session_token?: string;
  /** The foundation model behind a Bedrock ARN that names none (an application inference profile…). */
  cloudc_base_model?: string;
  cloudd_region?: string;
  cloudd_deployment_name?: string;
  cloudd_endpoint_name?: string;
  cloudd_api_version?: string;
  cloudd_deployment_type?: 'serverless' | 'managed';
  cloudd_resource_name?: string;
  cloudd_deployment_id?: string;
  cloudd_model_name?: string;
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  deployments?: AzureDeployment[];
}

/** The keys of ProviderTarget other than `provider`: what a config, virtual key or @slug may carry. */
export const PROVIDER_TARGET_KEYS = [
  'api_key',
  'custom_host',
  'vendora_organization',
  'vendora_project',
  'cloudb_project_id',
  'cloudb_region',
  'cloudb_service_account_json',
  'cloudb_request_type',
  'cloudb_shared_request_type',
  'cloudc_access_key_id',
  'cloudc_secret_access_key',
  'cloudc_region',
  'cloudc_session_token',
  'cloudc_base_model',
  'cloudd_region',
  'cloudd_deployment_name',
  'cloudd_endpoint_name',
  'cloudd_api_version',
  'cloudd_deployment_type',
  'cloudd_resource_name',
  'cloudd_deployment_id',
  'cloudd_model_name',
  'resource_name',
  'deployment_id',
  'api_version',
  'deployments',
] as const satisfies ReadonlyArray<keyof ProviderTarget>;

/** A model call's operation and its validated body, told apart by `endpoint`; with K, those of operation K. */
export type ModelRequest<K extends EndpointKind = EndpointKind> = {
  [P in K]: {
    endpoint: P;
    /** The validated OpenAI-shaped body (with the target's override_params applied, once routed). */
    body: RequestBodies[P];
  };
}[K];

/** One model call of operation K, as the adapter sees it; without K, any operation, told apart by `endpoint`. */
export type AdapterRequest<K extends EndpointKind = EndpointKind> = AdapterRequestFields & ModelRequest<K>;

/** What every operation's request carries besides its operation and body. */
export interface AdapterRequestFields {
  stream: boolean;
  target: ProviderTarget;
  /** Headers named by the config's `forward_headers`, lower-case, to send upstream as they are. */
  forwardHeaders: Record<string, string>;
  /** The client's request headers, lower-case (e.g. for `anthropic-beta` / `anthropic-version`). */
  clientHeaders: Record<string, string | string[] | undefined>;
  /** true: responses carry only standard OpenAI fields. false: extras such as `content_blocks`. */
  strictCompat: boolean;
  /** What `authenticate` returned, when the adapter has that step. */
  auth?: AuthMaterial;
}

export interface AuthMaterial {
  /** A bearer token obtained by a token exchange. */
  accessToken?: string;
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  url: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
}

/** The answer to a request an adapter sends itself: its head, and its body, read whole by `text` up to
 * `maxBytes` (past them the request is closed and the read rejects with UpstreamTooLarge). */
export interface OwnRequestAnswer {
  statusCode: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: { text(maxBytes: number): Promise<string> };
}

/**
 * How an adapter sends a request of its own (a token exchange): the way the gateway sends provider calls,
 * through its custom-host policy when a name is resolved, following no redirect. A connection the policy
 * refuses rejects with a GatewayError `custom_host_refused` without a param: the adapter names its setting.
 */
export interface OwnRequestSender {
  send(request: UpstreamRequest, signal: AbortSignalLike): Promise<OwnRequestAnswer>;
}

export interface UpstreamResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: unknown;
}

export interface UpstreamErrorResponse {
  status: number;
  headers: Record<string, string>;
  /** The raw body text (may be JSON, HTML, empty…). */
  bodyText: string;
}

/** One framed unit of an upstream stream. */
export type UpstreamEvent =
  /** A server-sent event: its `event:` name (if any) and its `data:` text. */
  | { kind: 'sse'; event: string | undefined; data: string }
  /** A binary event-stream message (AWS): string headers (`:event-type`, `:message-type`…) and its payload
   * parsed as JSON (or the raw text when it is not JSON). */
  | { kind: 'message'; headers: Record<string, string>; payload: unknown };

/** Reads the failure one kind of stream event reports; undefined when the event is not one. */
export type StreamFailureReader = (
  event: UpstreamEvent,
  json: Record<string, unknown> | undefined,
) => ProviderError | undefined;

/** Turns the bytes of an upstream stream into events. Pure and incremental. */
export interface FrameDecoder {
  /** Throws UpstreamTooLarge (core/upstream-limits.ts) when an event passes the decoder's bound. */
  push(bytes: Uint8Array): UpstreamEvent[];
  /** The body ended; returns what is left. A partial frame at the end is dropped (the stream was cut). */
  end(): UpstreamEvent[];
}

export type StreamOutput =
  /** An OpenAI chunk. `raw` is its JSON text when the upstream already sent exactly that text, so the
   * pipeline can forward the bytes without serialising again. */
  | {
      type: 'chunk';
      chunk: ChatCompletionChunk | TextCompletion | MessagesStreamEvent | ResponsesStreamEvent;
      raw?: string;
    }
  /** The upstream reported an error inside a 200 stream. */
  | { type: 'error'; error: ProviderError }
  /** An event that could not be understood (malformed JSON, unknown shape); skipped and recorded. */
  | { type: 'malformed'; detail: string }
  /** The upstream said the answer is complete (`[DONE]`, `message_stop`, `messageStop`…). */
  | { type: 'done' };

export interface StreamTranslator {
  push(event: UpstreamEvent): StreamOutput[];
  /** The upstream body ended (cleanly or not); emit what is still owed (e.g. a final usage chunk). */
  end(): StreamOutput[];
  /** Usage seen so far, for the log. */
  usage(): Usage | undefined;
  /** The service tier the stream says served it (OpenAI's chunks' `service_tier`), for the cost. */
  serviceTier?(): string | undefined;
  /** true once every choice has a finish_reason: the answer is complete even without a `done` marker. */
  finished(): boolean;
  /** true when it may hold the answer's text whole until the stream ends (the JSON mode of a provider
   * that answers it through a forced tool): the stream is then read only up to the bound of a whole
   * answer (GATEWAY_UPSTREAM_ANSWER_MAX_BYTES). */
  readonly holdsWhole?: boolean;
}

/** A pass-through call: any provider path under /v1, body and answer untouched. */
export interface PassthroughRequest {
  method: UpstreamRequest['method'];
  /** The path after `/v1`, with its query string, e.g. `/rerank?x=1`. */
  path: string;
  /** Client headers that may be forwarded (hop-by-hop and x-gateway-* already removed), lower-case. */
  headers: Record<string, string>;
  /** The client's body: its bytes, or a stream of them as they arrive. */
  body?: Uint8Array | AsyncIterable<Uint8Array>;
  target: ProviderTarget;
  auth?: AuthMaterial;
}

/** A pass-through call as its adapter judges it before any credential is used. */
export interface PassthroughCall {
  /** The path after `/v1`, with its query string. */
  path: string;
  target: ProviderTarget;
  /** The call is signed by a credential the caller did not send with it: a virtual key's, a catalog
   * provider's, a stored config's (not the client's Authorization, nor a config sent with the request). */
  storedCredential: boolean;
}

/** A provider's own APIs for work the gateway cannot do itself or hands over: its Files API, its
 * fine-tuning jobs (`fine_tuning_pause`: which it can also pause and resume) and its Batch API. */
export type ProviderResourceKind = 'files' | 'fine_tuning' | 'fine_tuning_pause' | 'batches';

/** One call of those APIs, in OpenAI's terms. */
export interface ResourceRequest {
  method: UpstreamRequest['method'];
  /** OpenAI's path after `/v1`, with its query string: `/fine_tuning/jobs/ftjob-1/events?limit=10`. */
  path: string;
  /** Lower-case; `content-type` of the body. */
  headers: Record<string, string>;
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
  target: ProviderTarget;
  auth?: AuthMaterial;
}

/** How an adapter reaches those APIs where the provider has them in OpenAI's wire format (OpenAI's own
 * paths and objects; Azure OpenAI's under `/openai` with an API version). Pure, like the operations. */
export interface ProviderResourceApi {
  readonly kinds: readonly ProviderResourceKind[];
  /** The upstream request, the target's credentials added. */
  buildRequest(req: ResourceRequest): UpstreamRequest;
  /** A non-2xx answer in the OpenAI error shape, status kept. */
  parseError(res: UpstreamErrorResponse): ProviderError;
  /** Its fine-tuning API keeps a job's `metadata` and answers it in the job list, as OpenAI's does: the
   * gateway names its own job there, so that a create whose answer was lost finds the job it made.
   * Absent (Azure OpenAI), a seed the gateway draws marks the job instead. */
  readonly jobMetadata?: boolean;
  /** Whether a fine-tuning job's create on `target` takes a `seed` (the API version it uses has one), which
   * the gateway then draws to mark a job its metadata cannot. Absent: it does. */
  jobSeed?(target: ProviderTarget): boolean;
  /** Its fine-tuning API lists a job's events and checkpoints oldest first (Azure OpenAI's reference),
   * where OpenAI's lists them newest first: the gateway reads the list whole and turns it round, unless
   * the items' times show it newest first already. */
  readonly listsOldestFirst?: boolean;
  /** A fine-tuning job object of the provider's in OpenAI's shape (`FineTuningJob`); absent: it is. */
  fineTuningJob?(job: Record<string, unknown>): Record<string, unknown>;
  /** The batch `endpoint` (and input lines' `url`) the provider expects for an OpenAI path such as
   * `/v1/chat/completions`; absent: the same path. */
  batchEndpoint?(path: string): string;
}

/** How `n` > 1 is honoured: by the provider, or by the gateway's fan-out. */
export type NHandling = 'native' | 'fanout';

/** A short statement of what an adapter supports, rendered into docs/providers.md. */
export interface ProviderCapabilities {
  endpoints: EndpointKind[];
  streaming: boolean;
  tools: boolean;
  parallelToolCalls: boolean;
  images: boolean;
  jsonSchema: boolean;
  thinking: boolean;
  /** Acts on Anthropic's prompt-caching breakpoints in a chat request (`cache_control` on a content part, a
   * message or a tool, the extension LiteLLM and Portkey take): a Messages request translated for it keeps
   * the client's (gateway/messages/messages-to-chat.ts). Absent: they are left out of the translation, as
   * an OpenAI-wire provider is sent the chat body as it is and strict ones refuse the unknown field. */
  promptCaching?: boolean;
  /** The most strings a chat request's `stop` takes, where the provider documents a bound (OpenAI's 4,
   * Gemini's 5), or per model when the provider's models differ (Vertex AI: Gemini's 5, none for Claude): a
   * Messages request translated for it with more `stop_sequences` is refused naming them, before any call.
   * Absent (or undefined for the model): no bound is known, and the provider judges. */
  stopSequences?: number | ((model: string) => number | undefined);
  /** Whether `model` (on `target`) takes the `thinking` option, when only some of the provider's models do
   * (Bedrock: Claude; Converse has no reasoning field for its other models, and refuses Anthropic's).
   * Absent: every model. A translated request (Messages) leaves its thinking out for the others, as it does
   * for a provider without the option; a chat request's is the adapter's to judge. */
  takesThinking?: (model: string, target: ProviderTarget) => boolean;
  /** `native`: the provider returns n choices; `fanout`: the gateway sends n calls and merges them. A
   * provider hosting model families that differ answers per request (Vertex AI: Gemini native, Claude not). */
  n: NHandling | ((req: AdapterRequest) => NHandling);
  /** The most embedding inputs one call takes, when the provider limits it below OpenAI's 2048 (Vertex AI:
   * one for Gemini embedding models, 250 for the others): the gateway sends a longer `input` as calls of at
   * most that many and merges their answers (gateway/embeddings-fanout.ts). Absent: every input in one call. */
  embeddingInputsPerCall?: (req: AdapterRequest<'embeddings'>) => number | undefined;
  /** The most input tokens one embeddings call takes in all, where the provider documents such a bound (Vertex
   * AI's :predict: 20,000): the gateway also splits `input` so that each call's estimated tokens stay within it
   * (gateway/embeddings-fanout.ts). Absent: calls are bounded by count alone. */
  embeddingTokensPerCall?: (req: AdapterRequest<'embeddings'>) => number | undefined;
  /** How each OpenAI parameter is handled, e.g. `max_tokens: "→ max_tokens"`,
   * `logit_bias: "refused (400): not supported by the provider"`. */
  parameters: Record<string, string>;
  /** Credentials and addressing keys used, in the spec's names. */
  credentials: string[];
  notes?: string[];
}

/** What an adapter does for operation K (chat, completions, embeddings; later responses, messages…). */
export interface OperationHandler<K extends EndpointKind = EndpointKind> {
  /** Builds the upstream request. Throws GatewayError (4xx) for what the provider cannot honour or a
   * target that lacks what the provider needs (naming the parameter or config key). */
  buildRequest(req: AdapterRequest<K>): UpstreamRequest | Promise<UpstreamRequest>;
  /** Translates a successful (2xx) JSON answer. Returns the very same object it was given when nothing
   * needed changing (the gateway then relays the upstream's bytes exactly). Throws ProviderError when a 2xx
   * body carries an error. */
  parseResponse(req: AdapterRequest<K>, res: UpstreamResponse): unknown;
  /** Absent when the operation never streams (embeddings). */
  createStreamTranslator?(req: AdapterRequest<K>): StreamTranslator;
  /** Whether this handler serves the request; absent means every request. A provider that hosts several
   * model families has an operation natively for some only (Anthropic Messages on Bedrock and Vertex:
   * Claude models); for the others the call is translated (gateway/steps/messages-step.ts,
   * gateway/steps/responses-step.ts). */
  accepts?(body: RequestBodies[K]): boolean;
  /** The usage of a JSON answer in the OpenAI shape, for the log and rate limits, when the answer is not
   * itself OpenAI-shaped (an answer relayed as the provider's own); absent means the body's `usage`. The
   * request is the one answered (what its target asked for may say how the call is billed). */
  usageOf?(body: unknown, req: AdapterRequest<K>): Usage | undefined;
}

/** An adapter's handlers, each typed for its own operation. */
export type OperationHandlers = { readonly [K in EndpointKind]?: OperationHandler<K> };

export interface ProviderAdapter {
  /** Canonical id used in `provider` / `x-gateway-provider`. */
  readonly id: string;
  /** Other names accepted (e.g. `vendora` for `openai`, `cloudc` for `bedrock`). */
  readonly aliases?: readonly string[];
  readonly displayName: string;
  readonly capabilities: ProviderCapabilities;

  /** Optional token exchange, e.g. a service-account access token; cached by its implementation. Its
   * requests go through `sender`. */
  authenticate?(
    target: ProviderTarget,
    signal: AbortSignalLike,
    sender: OwnRequestSender,
  ): Promise<AuthMaterial>;

  /** One handler per operation the provider offers; `capabilities.endpoints` lists the same keys. */
  readonly operations: OperationHandlers;

  /** The stream's framing; SSE when absent. `maxEventBytes` bounds one event held until it is complete
   * (no bound when absent: the gateway always gives its setting). */
  createFrameDecoder?(maxEventBytes?: number): FrameDecoder;

  /** Normalises a non-2xx answer: status kept, message/type/code from the provider's own error shape,
   * `retryAfterMs` from Retry-After / Retry-After-ms or the provider's own hint. */
  parseError(req: AdapterRequest, res: UpstreamErrorResponse): ProviderError;

  /** Refuses (throws a 4xx GatewayError) a pass-through call its target's credential may not make, before
   * the credential is used: Vertex AI's stored service account in a project other than the target's. */
  refusePassthrough?(call: PassthroughCall): void;

  /** Refuses (throws a 4xx GatewayError) a pass-through body a stored credential may not send, before the
   * credential is used: Vertex AI's naming resources of a project other than the target's. With it, the
   * body of a stored credential's call is read whole first (up to the body limit) and judged, then sent. */
  refuseStoredPassthroughBody?(call: PassthroughCall, body: Uint8Array): void;

  /** Builds a pass-through request (provider base URL + path, provider auth added). */
  buildPassthrough(req: PassthroughRequest): UpstreamRequest | Promise<UpstreamRequest>;

  /** The usage of a pass-through's JSON answer, in whichever of the provider's own shapes it comes, as the
   * provider's translated calls convert it (providers/shared/answer-usage.ts); undefined for an answer
   * without usage or of a shape it does not know. */
  passthroughUsage(answer: Record<string, unknown>): Usage | undefined;

  /** The usage a pass-through's answer gives in its headers, for an answer whose body carries none
   * (Bedrock's InvokeModel of most models); lower-case names. */
  passthroughHeaderUsage?(headers: Record<string, string>): Usage | undefined;

  /** The failure an event of a pass-through's stream reports (an error the provider sends inside the 200
   * it already answered with), as its translated calls' streams read it; undefined for any other event.
   * `json` is the event's JSON object where it has one (a server-sent event's data). */
  passthroughStreamFailure?: StreamFailureReader;

  /** The provider's own Files, fine-tuning and Batch APIs, where it has them (gateway/provider-resources/). */
  readonly resources?: ProviderResourceApi;

  /** The pass-through request is signed over its body bytes (SigV4): the gateway reads the body whole
   * first. Otherwise the body is streamed to the provider as it arrives. */
  readonly passthroughSignsBody?: boolean;
}
