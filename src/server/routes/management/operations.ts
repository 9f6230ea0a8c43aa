/** The management API's operations, for the OpenAPI document. */
import type { Operation } from '../../../core/operation.js';
import {
  CreateApiKeyBody,
  CreateConfigBody,
  CreateCredentialBody,
  CreateGuardrailBody,
  CreateRateLimitPolicyBody,
  CreateWorkspaceBody,
  UpdateApiKeyBody,
  UpdateConfigBody,
  UpdateCredentialBody,
  UpdateGuardrailBody,
  UpdateRateLimitPolicyBody,
} from './body-schemas.js';

function credentialOperations(path: string, noun: string, tag: string): Operation[] {
  return [
    {
      method: 'post',
      path,
      summary: `Create a ${noun} (secrets are stored encrypted and never returned)`,
      tags: [tag],
      requestBody: CreateCredentialBody,
    },
    { method: 'get', path, summary: `List the workspace's ${noun}s`, tags: [tag] },
    { method: 'get', path: `${path}/{slug}`, summary: `Get a ${noun} by slug or id`, tags: [tag] },
    {
      method: 'patch',
      path: `${path}/{slug}`,
      summary: `Update a ${noun}: settings left out are kept, settings sent as null are removed`,
      tags: [tag],
      requestBody: UpdateCredentialBody,
    },
    { method: 'delete', path: `${path}/{slug}`, summary: `Delete a ${noun}`, tags: [tag] },
  ];
}

export const MANAGEMENT_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/api-keys',
    summary: 'Create an API key in the workspace; its value (`key`) is returned only here',
    tags: ['API keys'],
    requestBody: CreateApiKeyBody,
  },
  { method: 'get', path: '/api-keys', summary: "List the workspace's API keys", tags: ['API keys'] },
  { method: 'get', path: '/api-keys/{id}', summary: 'Get an API key', tags: ['API keys'] },
  {
    method: 'patch',
    path: '/api-keys/{id}',
    summary: 'Update an API key (name, role, metadata, expires_at)',
    tags: ['API keys'],
    requestBody: UpdateApiKeyBody,
  },
  {
    method: 'post',
    path: '/api-keys/{id}/revoke',
    summary: 'Revoke an API key; it stops working at once',
    tags: ['API keys'],
  },
  { method: 'delete', path: '/api-keys/{id}', summary: 'Delete an API key', tags: ['API keys'] },
  ...credentialOperations('/virtual-keys', 'virtual key', 'Virtual keys'),
  ...credentialOperations('/providers', 'model catalog provider', 'Providers'),
  {
    method: 'post',
    path: '/configs',
    summary: 'Store a config (checked in full); version 1',
    tags: ['Configs'],
    requestBody: CreateConfigBody,
  },
  { method: 'get', path: '/configs', summary: "List the workspace's configs", tags: ['Configs'] },
  { method: 'get', path: '/configs/{id}', summary: 'Get a config by slug or id', tags: ['Configs'] },
  {
    method: 'patch',
    path: '/configs/{id}',
    summary: 'Update a config; a new `config` makes a new version',
    tags: ['Configs'],
    requestBody: UpdateConfigBody,
  },
  {
    method: 'get',
    path: '/configs/{id}/versions',
    summary: "List a config's versions, oldest first",
    tags: ['Configs'],
  },
  { method: 'delete', path: '/configs/{id}', summary: 'Delete a config', tags: ['Configs'] },
  {
    method: 'post',
    path: '/guardrails',
    summary: 'Store a guardrail (checked in full), used in a config by its slug; version 1',
    tags: ['Guardrails'],
    requestBody: CreateGuardrailBody,
  },
  { method: 'get', path: '/guardrails', summary: "List the workspace's guardrails", tags: ['Guardrails'] },
  {
    method: 'get',
    path: '/guardrails/{id}',
    summary: 'Get a guardrail (its latest version) by slug or id',
    tags: ['Guardrails'],
  },
  {
    method: 'patch',
    path: '/guardrails/{id}',
    summary: 'Update a guardrail; a new `guardrail` makes a new version, used by every node at once',
    tags: ['Guardrails'],
    requestBody: UpdateGuardrailBody,
  },
  {
    method: 'get',
    path: '/guardrails/{id}/versions',
    summary: "List a guardrail's versions, oldest first",
    tags: ['Guardrails'],
  },
  { method: 'delete', path: '/guardrails/{id}', summary: 'Delete a guardrail', tags: ['Guardrails'] },
  {
    method: 'post',
    path: '/policies/rate-limits',
    summary: 'Create a rate-limit policy; answers `{id, object: "policy_usage_limits"}`',
    tags: ['Rate-limit policies'],
    requestBody: CreateRateLimitPolicyBody,
  },
  {
    method: 'get',
    path: '/policies/rate-limits',
    summary:
      'List rate-limit policies (`workspace_id`, `status`, `type`, `unit`, `page_size`, `current_page`), with `total`',
    tags: ['Rate-limit policies'],
  },
  {
    method: 'get',
    path: '/policies/rate-limits/{id}',
    summary: 'Get a rate-limit policy',
    tags: ['Rate-limit policies'],
  },
  {
    method: 'put',
    path: '/policies/rate-limits/{id}',
    summary: 'Update a rate-limit policy (fields left out are kept); every node applies it within a second',
    tags: ['Rate-limit policies'],
    requestBody: UpdateRateLimitPolicyBody,
  },
  {
    method: 'patch',
    path: '/policies/rate-limits/{id}',
    summary: 'The same as PUT',
    tags: ['Rate-limit policies'],
    requestBody: UpdateRateLimitPolicyBody,
  },
  {
    method: 'delete',
    path: '/policies/rate-limits/{id}',
    summary: 'Delete a rate-limit policy',
    tags: ['Rate-limit policies'],
  },
  {
    method: 'post',
    path: '/workspaces',
    summary: "Create a workspace in the caller's organisation, with its first admin key (returned once)",
    tags: ['Workspaces'],
    requestBody: CreateWorkspaceBody,
  },
  {
    method: 'get',
    path: '/workspaces',
    summary: "List the organisation's workspaces",
    tags: ['Workspaces'],
  },
];
