/** One operation of the HTTP API as the OpenAPI document describes it (server/openapi.ts renders these). */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tags: string[];
  requestBody?: unknown;
  response?: unknown;
  parameters?: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: unknown }>;
}
