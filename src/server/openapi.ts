/**
 * The gateway's OpenAPI document, assembled from the same TypeBox schemas that validate the bodies.
 */
import { ENDPOINTS } from '../gateway/endpoints.js';
import { GatewayConfigSchema } from '../gateway/config/index.js';
import { GuardrailDefinitionSchema } from '../gateway/config/guardrail-definition.js';
import { MANAGEMENT_OPERATIONS } from './routes/management/operations.js';
import type { Operation } from '../core/operation.js';

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

const MODEL_OPERATIONS: Operation[] = [
  ...Object.values(ENDPOINTS).map((endpoint) => endpoint.openapi),
  { method: 'get', path: '/models', summary: 'List models', tags: ['Models'] },
  {
    method: 'get',
    path: '/logs',
    summary: 'List log records of the workspace, newest first',
    tags: ['Logs'],
  },
  { method: 'get', path: '/logs/{id}', summary: 'Get one log record', tags: ['Logs'] },
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
  for (const op of [...MODEL_OPERATIONS, ...MANAGEMENT_OPERATIONS]) {
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
        schemas: { Error: ErrorSchema, Config: GatewayConfigSchema, Guardrail: GuardrailDefinitionSchema },
        securitySchemes: { gatewayKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key' } },
      },
      security: [{ gatewayKey: [] }],
    }),
  ) as { paths: unknown; components: { schemas: Record<string, unknown> } };
  document.paths = dropIds(document.paths);
  return document;
}
