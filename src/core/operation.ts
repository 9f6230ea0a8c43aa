/** One operation of the HTTP API as the OpenAPI document describes it (server/openapi.ts renders these). */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tags: string[];
  requestBody?: unknown;
  response?: unknown;
  parameters?: Array<{
    name: string;
    in: 'path' | 'query' | 'header';
    required?: boolean;
    schema: unknown;
    /** An object in the query as `name[key]=value` pairs (with `explode: true`). */
    style?: 'deepObject';
    explode?: boolean;
    description?: string;
  }>;
  /** Statuses beyond 200 and the error default that the operation answers with, and their bodies. */
  otherResponses?: Record<string, { description: string; schema?: unknown }>;
}
