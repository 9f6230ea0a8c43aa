/**
 * The config object: how a request is routed, retried, cached and checked. One node shape serves
 * the root and every entry of `targets` (recursively). Every object is closed: a misspelt key is
 * an error, never a silently ignored setting. Rules that relate keys to each other live in
 * `config-rules.ts`.
 */
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import {
  AfterRequestHookSchema,
  BeforeRequestHookSchema,
  InputGuardrailSchema,
  OutputGuardrailSchema,
} from './hook-schemas.js';
import { withErrorMessage } from '../../core/validator/explain-error.js';

function Closed<T extends TProperties>(properties: T, options: { description?: string } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

const Text = Type.String({ minLength: 1 });
const OptionalText = Type.Optional(Text);

const StatusCodesSchema = Type.Array(Type.Integer({ minimum: 100, maximum: 599 }));

const StrategyModeSchema = Type.Union([
  Type.Literal('single'),
  Type.Literal('loadbalance'),
  Type.Literal('fallback'),
  Type.Literal('conditional'),
]);

/**
 * The longest cooldown: a day. The spec bounds it only from below; a longer one is a mistake (a circuit
 * shut for weeks on one outage), and one beyond what Redis takes as an expiry left the circuit unable to
 * open on a scaled-out gateway.
 */
export const MAX_COOLDOWN_INTERVAL_MS = 86_400_000;

const CircuitBreakerSchema = Closed({
  failure_threshold: Type.Number({ minimum: 1 }),
  cooldown_interval: Type.Number({
    minimum: 30000,
    maximum: MAX_COOLDOWN_INTERVAL_MS,
    description: 'Milliseconds, from 30 000 to 86 400 000 (a day).',
  }),
  failure_status_codes: Type.Optional(StatusCodesSchema),
});

const StrategySchema = Closed({
  mode: StrategyModeSchema,
  conditions: Type.Optional(
    Type.Array(
      Closed({
        // The query language (operators) is checked by the conditional router, not here.
        query: Type.Object({}, { description: 'Condition over request metadata and parameters.' }),
        then: Type.String({ minLength: 1, description: 'The `name` of the target to use.' }),
      }),
      { minItems: 1 },
    ),
  ),
  default: Type.Optional(Type.String({ minLength: 1, description: 'The `name` of the target to use.' })),
  on_status_codes: Type.Optional(StatusCodesSchema),
  /** Where the reference gateway puts a node's circuit breaker: parse-config.ts makes it the node's. */
  cb_config: Type.Optional(CircuitBreakerSchema),
});

/** The model that embeds requests for the semantic cache, reached through the gateway's own routing. */
const CacheEmbeddingSchema = Closed({
  virtual_key: Type.Optional(Type.String({ minLength: 1, description: 'A virtual key of the workspace.' })),
  config: Type.Optional(Type.String({ minLength: 1, description: 'A stored config of the workspace.' })),
  model: Type.Optional(Type.String({ minLength: 1, description: 'The embedding model.' })),
});

const CacheSchema = Closed({
  mode: Type.Union([Type.Literal('simple'), Type.Literal('semantic')]),
  max_age: Type.Optional(Type.Integer({ minimum: 0, description: 'Seconds an entry stays fresh.' })),
  similarity_threshold: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      description: 'Semantic mode: the least cosine similarity that answers (default 0.95).',
    }),
  ),
  embedding: Type.Optional(CacheEmbeddingSchema),
});

const RetrySchema = Closed({
  attempts: Type.Integer({ minimum: 0, maximum: 10 }),
  on_status_codes: Type.Optional(StatusCodesSchema),
  use_retry_after_headers: Type.Optional(Type.Boolean({ default: false })),
  /** The reference gateway reads this spelling (its documentation gives the other): configs written for it
   * use either. */
  use_retry_after_header: Type.Optional(
    Type.Boolean({
      description: 'The same as `use_retry_after_headers`, as the reference gateway spells it.',
    }),
  ),
});

const DeploymentSchema = Closed({
  deployment_id: Type.String(),
  alias: Type.String(),
  api_version: Type.String(),
  is_default: Type.Optional(Type.Boolean()),
});

/** An HTTP header name (RFC 9110 token). */
const HeaderName = withErrorMessage(
  Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }),
  'must be an HTTP header name',
);

const CustomHost = withErrorMessage(
  Type.String({
    pattern: '^https?://[^\\s/?#]+[^\\s]*$',
    description: 'Base URL of a privately hosted, provider-compatible endpoint.',
  }),
  'must be an http or https URL',
);

export const GatewayConfigSchema = Type.Recursive(
  (Node) =>
    Closed({
      strategy: Type.Optional(StrategySchema),
      name: OptionalText,
      strict_compat_compliance: Type.Optional(Type.Boolean()),
      provider: Type.Optional(
        Type.String({ minLength: 1, description: 'A supported provider name, or `@<provider_slug>`.' }),
      ),
      api_key: OptionalText,
      virtual_key: OptionalText,
      prompt_id: OptionalText,
      override_params: Type.Optional(Type.Object({}, { description: 'Request parameters to set.' })),
      request_timeout: Type.Optional(Type.Integer({ minimum: 1, description: 'Milliseconds.' })),
      cache: Type.Optional(CacheSchema),
      cb_config: Type.Optional(CircuitBreakerSchema),
      retry: Type.Optional(RetrySchema),
      weight: Type.Optional(Type.Number({ minimum: 0 })),
      on_status_codes: Type.Optional(StatusCodesSchema),
      custom_host: Type.Optional(CustomHost),
      forward_headers: Type.Optional(Type.Array(HeaderName)),
      targets: Type.Optional(Type.Array(Node, { minItems: 1 })),
      resource_name: Type.Optional(Type.String()),
      deployment_id: Type.Optional(Type.String()),
      api_version: Type.Optional(Type.String()),
      deployments: Type.Optional(Type.Array(DeploymentSchema)),
      vendora_organization: Type.Optional(Type.String()),
      vendora_project: Type.Optional(Type.String()),
      cloudb_project_id: Type.Optional(Type.String()),
      cloudb_region: Type.Optional(Type.String()),
      cloudb_service_account_json: Type.Optional(Type.Object({})),
      cloudb_request_type: Type.Optional(
        Type.Union([Type.Literal('dedicated'), Type.Literal('shared')], {
          description:
            "Vertex AI's X-Vertex-AI-LLM-Request-Type on every call: dedicated, the project's Provisioned Throughput only (a 429 beyond it); shared, pay-as-you-go only, bypassing it. Absent: Provisioned Throughput first, the rest pay-as-you-go.",
        }),
      ),
      cloudb_shared_request_type: Type.Optional(
        Type.Union([Type.Literal('priority'), Type.Literal('flex')], {
          description:
            "Vertex AI's X-Vertex-AI-LLM-Shared-Request-Type on every call: the pay-as-you-go that serves what Provisioned Throughput does not (all of it with cloudb_request_type shared), priority (Priority PayGo) or flex (Flex PayGo). Vertex serves them on the global endpoint only, so cloudb_region must be global; not with cloudb_request_type dedicated.",
        }),
      ),
      cloudc_access_key_id: Type.Optional(Type.String()),
      cloudc_secret_access_key: Type.Optional(Type.String()),
      cloudc_region: Type.Optional(Type.String()),
      cloudc_session_token: Type.Optional(Type.String()),
      cloudc_base_model: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'The foundation model behind a Bedrock model ARN that names none (an application inference profile, a provisioned or custom model), e.g. cohere.embed-english-v3: what the request body is shaped for.',
        }),
      ),
      cloudd_region: Type.Optional(Type.String()),
      cloudd_deployment_name: Type.Optional(Type.String()),
      cloudd_endpoint_name: Type.Optional(Type.String()),
      cloudd_api_version: Type.Optional(Type.String()),
      cloudd_deployment_type: Type.Optional(
        Type.Union([Type.Literal('serverless'), Type.Literal('managed')]),
      ),
      cloudd_resource_name: Type.Optional(Type.String()),
      cloudd_deployment_id: Type.Optional(Type.String()),
      cloudd_model_name: Type.Optional(Type.String()),
      before_request_hooks: Type.Optional(Type.Array(BeforeRequestHookSchema)),
      after_request_hooks: Type.Optional(Type.Array(AfterRequestHookSchema)),
      input_guardrails: Type.Optional(Type.Array(InputGuardrailSchema)),
      output_guardrails: Type.Optional(Type.Array(OutputGuardrailSchema)),
    }),
  { $id: 'GatewayConfig', title: 'Gateway config' },
);

/** The root config object. */
export type GatewayConfig = Static<typeof GatewayConfigSchema>;
/** One entry of `targets`: the same shape as the root. */
export type TargetConfig = GatewayConfig;
export type RetryConfig = Static<typeof RetrySchema>;
export type CircuitBreakerConfig = Static<typeof CircuitBreakerSchema>;
