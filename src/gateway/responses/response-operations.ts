/** The Responses ingress's operations beyond `POST /responses` (an endpoint descriptor, endpoints.ts), for
 * the OpenAPI document (server/openapi.ts). */
import type { Operation } from '../../core/operation.js';
import { INCLUDE_VALUES } from '../../core/schemas/responses-request.js';

const IncludeParameter = {
  name: 'include',
  in: 'query' as const,
  schema: { type: 'array', items: { type: 'string', enum: [...INCLUDE_VALUES] } },
};

export const RESPONSE_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/responses/{response_id}',
    summary: 'Get a stored response of the workspace',
    tags: ['Responses'],
    parameters: [
      IncludeParameter,
      {
        name: 'stream',
        in: 'query',
        description:
          'true streams the events of a background response created with stream: true (kept until an hour after it ended): those stored, then the live ones until it ends; any other response is a 400',
        schema: { type: 'boolean' },
      },
      {
        name: 'starting_after',
        in: 'query',
        description: 'With stream=true: the sequence number of the event after which to start streaming',
        schema: { type: 'integer', minimum: 0 },
      },
    ],
  },
  {
    method: 'delete',
    path: '/responses/{response_id}',
    summary: 'Delete a stored response and its input items',
    tags: ['Responses'],
  },
  {
    method: 'post',
    path: '/responses/{response_id}/cancel',
    summary:
      'Cancel a background response that is queued or in progress (one that ended is answered as it is; a foreground one is a 400)',
    tags: ['Responses'],
  },
  {
    method: 'get',
    path: '/responses/{response_id}/input_items',
    summary: "List a stored response's input items (the input item list)",
    tags: ['Responses'],
    parameters: [
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      { name: 'order', in: 'query', schema: { type: 'string', enum: ['asc', 'desc'], default: 'asc' } },
      { name: 'after', in: 'query', schema: { type: 'string' } },
      { name: 'before', in: 'query', schema: { type: 'string' } },
      IncludeParameter,
    ],
  },
];
