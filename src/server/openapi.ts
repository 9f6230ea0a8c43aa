/**
 * The gateway's OpenAPI document, assembled from the same TypeBox schemas that validate the bodies.
 */
import { ENDPOINTS } from '../gateway/endpoints.js';
import { GatewayConfigSchema } from '../gateway/config/index.js';
import { GuardrailDefinitionSchema } from '../gateway/config/guardrail-definition.js';
import { API_KEY_SELF_OPERATION, MANAGEMENT_OPERATIONS } from './routes/management/operations.js';
import { FILE_BATCH_OPERATIONS } from './routes/file-batch-operations.js';
import { FINE_TUNING_OPERATIONS } from './routes/fine-tuning.js';
import { PROMPT_OPERATIONS, PromptCompletionEnvelopeSchema } from '../gateway/prompts/prompt-operations.js';
import type { Operation } from '../core/operation.js';
import { RESPONSE_OPERATIONS } from '../gateway/responses/response-operations.js';

const ErrorSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        type: { type: 'string' },
        param: { type: ['string', 'null'] },
        code: { type: ['string', 'null'] },
      },
      required: ['message', 'type', 'param', 'code'],
    },
  },
  required: ['error'],
};

/** `hook_results`: every hook that ran, before and after the call, with each of its checks. */
const HookResultsSchema = {
  type: 'object',
  properties: {
    before_request_hooks: { type: 'array', items: { $ref: '#/components/schemas/HookResult' } },
    after_request_hooks: { type: 'array', items: { $ref: '#/components/schemas/HookResult' } },
  },
  required: ['before_request_hooks', 'after_request_hooks'],
};

const HookResultSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['guardrail', 'mutator'] },
    event: { type: 'string', enum: ['beforeRequestHook', 'afterRequestHook'] },
    verdict: { type: 'boolean' },
    deny: { type: 'boolean' },
    async: { type: 'boolean' },
    transformed: { type: 'boolean' },
    feedback: { type: ['object', 'null'] },
    execution_time: { type: 'number', description: 'Milliseconds.' },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          verdict: { type: 'boolean' },
          explanation: { type: ['string', 'null'] },
          data: {},
          error: {
            type: ['object', 'null'],
            properties: { message: { type: 'string' }, timed_out: { type: 'boolean' } },
          },
          on_error: { type: 'string', enum: ['pass', 'fail'] },
          execution_time: { type: 'number', description: 'Milliseconds.' },
        },
        required: ['id', 'verdict', 'explanation', 'data', 'error', 'on_error', 'execution_time'],
      },
    },
  },
  required: [
    'id',
    'type',
    'event',
    'verdict',
    'deny',
    'async',
    'transformed',
    'feedback',
    'execution_time',
    'checks',
  ],
};

/** Configs or stored guardrails naming the thing, each with where (`param`). */
const NamingConfigsSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: { slug: { type: 'string' }, param: { type: 'string' }, reason: { type: 'string' } },
    required: ['slug', 'param'],
  },
};

/** A 409 of the management API: the error, and, when it refuses a change for what depends on it,
 * `error.dependents` (docs/management-api.md, "Errors"). */
const DependentsConflictSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        ...ErrorSchema.properties.error.properties,
        dependents: {
          type: 'object',
          properties: {
            configs: NamingConfigsSchema,
            prompts: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  slug: { type: 'string' },
                  versions: { type: 'array', items: { type: 'integer' } },
                  reason: { type: 'string' },
                },
                required: ['slug', 'versions'],
              },
            },
            guardrails: NamingConfigsSchema,
            more: {
              type: 'object',
              properties: {
                configs: { type: 'integer' },
                prompts: { type: 'integer' },
                guardrails: { type: 'integer' },
              },
              required: ['configs', 'prompts', 'guardrails'],
            },
          },
          required: ['configs', 'prompts', 'guardrails'],
        },
      },
      required: ErrorSchema.properties.error.required,
    },
  },
  required: ['error'],
};

/** A 446: the error (type `hooks_failed`) and the results that denied the call. */
const HooksFailedSchema = {
  type: 'object',
  properties: {
    error: ErrorSchema.properties.error,
    hook_results: { $ref: '#/components/schemas/HookResults' },
  },
  required: ['error', 'hook_results'],
};

const stringQuery = (name: string) => ({ name, in: 'query' as const, schema: { type: 'string' } });

/** What both analytics operations take (docs/observability.md); `metadata.<key>` filters too. */
const ANALYTICS_PARAMETERS = [
  ...['from', 'to'].map((name) => ({
    name,
    in: 'query' as const,
    description: 'ISO 8601, or milliseconds since the epoch',
    schema: { type: 'string' },
  })),
  ...['group_by', 'provider', 'model', 'api_key_id', 'prompt_id', 'workspace_id'].map(stringQuery),
  { name: 'status_class', in: 'query' as const, schema: { type: 'string', pattern: '^[1-5]xx$' } },
  {
    name: 'limit',
    in: 'query' as const,
    description: 'Groups kept, the most requested; the rest are summed as "(other)"',
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  },
];

const MODEL_OPERATIONS: Operation[] = [
  ...Object.values(ENDPOINTS).map((endpoint) => endpoint.openapi),
  ...PROMPT_OPERATIONS,
  ...RESPONSE_OPERATIONS,
  ...FILE_BATCH_OPERATIONS,
  ...FINE_TUNING_OPERATIONS,
  { method: 'get', path: '/models', summary: 'List models', tags: ['Models'] },
  {
    method: 'get',
    path: '/logs',
    summary:
      'List log records of the workspace, newest first (also `metadata.<key>=<value>` to filter by metadata)',
    tags: ['Logs'],
    parameters: [
      ...['trace_id', 'provider', 'model', 'api_key_id', 'search', 'after'].map(stringQuery),
      { name: 'status', in: 'query', schema: { type: 'integer', minimum: 100, maximum: 599 } },
      { name: 'from_ms', in: 'query', schema: { type: 'integer', minimum: 0 } },
      { name: 'to_ms', in: 'query', schema: { type: 'integer', minimum: 0 } },
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
    ],
  },
  { method: 'get', path: '/logs/{id}', summary: 'Get one log record', tags: ['Logs'] },
  {
    method: 'get',
    path: '/analytics/timeseries',
    summary:
      'Requests, errors, tokens, cost and latency per time bucket, grouped and filtered (from rollups)',
    tags: ['Analytics'],
    parameters: [
      ...ANALYTICS_PARAMETERS,
      { name: 'interval', in: 'query', schema: { type: 'string', enum: ['minute', 'hour', 'day'] } },
    ],
  },
  {
    method: 'get',
    path: '/analytics/summary',
    summary: 'Requests, errors, tokens, cost and latency over a range, grouped and filtered (from rollups)',
    tags: ['Analytics'],
    parameters: ANALYTICS_PARAMETERS,
  },
];

function toPathItem(op: Operation): Record<string, unknown> {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  return {
    summary: op.summary,
    tags: op.tags,
    parameters: [
      { name: 'x-gateway-api-key', in: 'header', required: true, schema: { type: 'string' } },
      ...pathParams,
      ...(op.parameters ?? []),
    ],
    ...(op.requestBody
      ? { requestBody: { required: true, content: { 'application/json': { schema: op.requestBody } } } }
      : {}),
    responses: {
      '200': {
        description: 'Success',
        ...(op.response ? { content: { 'application/json': { schema: op.response } } } : {}),
      },
      ...Object.fromEntries(
        Object.entries(op.otherResponses ?? {}).map(([status, { description, schema }]) => [
          status,
          { description, ...(schema ? { content: { 'application/json': { schema } } } : {}) },
        ]),
      ),
      default: {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
}

/** Whether a schema refers to itself by its `$id` (a recursive schema needs its `$id` to resolve). */
function refersTo(value: unknown, id: string): boolean {
  if (Array.isArray(value)) return value.some((item) => refersTo(item, id));
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, item]) => (key === '$ref' && item === id) || refersTo(item, id));
}

/**
 * Drops the `$id` of every schema that does not refer to itself. Shared bodies are embedded under several
 * operations, and one document may not hold two schemas with one `$id`; without it, each embedded body
 * stays a standalone schema. Recursive ones (the config) live once, in `components.schemas`.
 */
function dropIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropIds);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  const id = (value as Record<string, unknown>).$id;
  const keepId = typeof id === 'string' && refersTo(value, id);
  for (const [key, item] of Object.entries(value)) {
    if (key === '$id' && !keepId) continue;
    out[key] = dropIds(item);
  }
  return out;
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of [...MODEL_OPERATIONS, API_KEY_SELF_OPERATION, ...MANAGEMENT_OPERATIONS]) {
    paths[`/v1${op.path}`] ??= {};
    paths[`/v1${op.path}`][op.method] = toPathItem(op);
  }
  const document = JSON.parse(
    JSON.stringify({
      openapi: '3.1.0',
      info: {
        title: 'AI Gateway',
        version: '1',
        description: 'One OpenAI-shaped API in front of every model provider.',
      },
      servers: [{ url: '/' }],
      paths,
      components: {
        schemas: {
          Error: ErrorSchema,
          Config: GatewayConfigSchema,
          Guardrail: GuardrailDefinitionSchema,
          HookResults: HookResultsSchema,
          HookResult: HookResultSchema,
          HooksFailed: HooksFailedSchema,
          DependentsConflict: DependentsConflictSchema,
          PromptCompletionEnvelope: PromptCompletionEnvelopeSchema,
        },
        securitySchemes: { gatewayKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key' } },
      },
      security: [{ gatewayKey: [] }],
    }),
  ) as { paths: unknown; components: { schemas: Record<string, unknown> } };
  document.paths = dropIds(document.paths);
  return document;
}
