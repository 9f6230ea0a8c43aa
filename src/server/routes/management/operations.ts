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
  CreatePromptBody,
  UpdatePromptBody,
  PublishBody,
  CreatePromptPartialBody,
  UpdatePromptPartialBody,
  UpdateRateLimitPolicyBody,
} from './body-schemas.js';
import { POLICY_PAGE_SIZE } from './rate-limit-policies.js';

/** Make a change that breaks what depends on it: prompts including a partial, prompts sending their
 * calls to a config (deleted or archived), configs (or prompts) naming a prompt (deleted, or sending
 * their targets' calls to a stored credential beside a host of their own, as can a change of the config
 * it sends its calls to), a virtual key (deleted, or
 * given another provider) or a guardrail. */
const FORCE = { name: 'force', in: 'query', schema: { type: 'boolean' } } as const;

/** What an operation that `force` makes anyway takes, and its refusal without it: a 409 naming what
 * depends on the change in `error.dependents`. */
const FORCEABLE = {
  parameters: [FORCE],
  otherResponses: {
    '409': {
      description:
        'Refused for what depends on it (`error.dependents` names them), or another conflict (a slug in use)',
      schema: { $ref: '#/components/schemas/DependentsConflict' },
    },
  },
} satisfies Pick<Operation, 'parameters' | 'otherResponses'>;

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
      summary: `Update a ${noun}: settings left out are kept, settings sent as null are removed. Another \`provider\`, or a setting whose change would make their calls fail, is refused (409) while configs, prompts or guardrails name it, unless \`force=true\``,
      tags: [tag],
      requestBody: UpdateCredentialBody,
      ...FORCEABLE,
    },
    {
      method: 'delete',
      path: `${path}/{slug}`,
      summary: `Delete a ${noun}; refused (409) while configs or prompts name it, unless \`force=true\``,
      tags: [tag],
      ...FORCEABLE,
    },
  ];
}

/** The one management route any key may call, a member's included (not in MANAGEMENT_OPERATIONS, which
 * need an admin key). */
export const API_KEY_SELF_OPERATION: Operation = {
  method: 'get',
  path: '/api-keys/self',
  summary:
    "The calling key's own record (never its value), its workspace, and its scope (`organisation` or `workspace`)",
  tags: ['API keys'],
};

/**
 * The workspace a rate-limit policy route acts on, id or slug: an organisation-level admin key's choice (by
 * id, without it such a key finds the policy in any workspace of its organisation).
 */
const POLICY_WORKSPACE = { name: 'workspace_id', in: 'query', schema: { type: 'string' } } as const;

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
  {
    method: 'post',
    path: '/api-keys/{id}/rotate',
    summary:
      'Rotate an API key: a new value (`key`, returned only here) for the same key; the old one stops working at once',
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
    summary:
      "Update a config; a new `config` makes a new version. Archiving it is refused (409) while prompts send their calls to it, and so is a change sending the calls of configs' targets naming those prompts to a stored credential beside a host of their own, unless `force=true`",
    tags: ['Configs'],
    requestBody: UpdateConfigBody,
    ...FORCEABLE,
  },
  {
    method: 'get',
    path: '/configs/{id}/versions',
    summary: "List a config's versions, oldest first",
    tags: ['Configs'],
  },
  {
    method: 'delete',
    path: '/configs/{id}',
    summary: 'Delete a config; refused (409) while prompts send their calls to it, unless `force=true`',
    tags: ['Configs'],
    ...FORCEABLE,
  },
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
  {
    method: 'delete',
    path: '/guardrails/{id}',
    summary: 'Delete a guardrail; refused (409) while configs or prompts list it, unless `force=true`',
    tags: ['Guardrails'],
    ...FORCEABLE,
  },
  {
    method: 'post',
    path: '/prompts',
    summary: 'Store a prompt (checked in full): version 1, published',
    tags: ['Prompts'],
    requestBody: CreatePromptBody,
  },
  {
    method: 'get',
    path: '/prompts',
    summary: "List the workspace's prompts (`?name=` keeps those whose name contains it)",
    tags: ['Prompts'],
    parameters: [{ name: 'name', in: 'query', schema: { type: 'string' } }],
  },
  {
    method: 'get',
    path: '/prompts/{id}',
    summary: 'Get a prompt (its latest version) by slug or id',
    tags: ['Prompts'],
  },
  {
    method: 'put',
    path: '/prompts/{id}',
    summary:
      'Make the next version of a prompt (checked in full); the published version stays. Refused (409) when targets of configs selecting its latest would have their calls refused at their host, unless `force=true`',
    tags: ['Prompts'],
    requestBody: UpdatePromptBody,
    ...FORCEABLE,
  },
  {
    method: 'put',
    path: '/prompts/{id}/publish',
    summary:
      'Publish a version: what calls without @… run, on every node at once. Refused (409) when targets of configs selecting the published version would have their calls refused at their host, unless `force=true`',
    tags: ['Prompts'],
    requestBody: PublishBody,
    ...FORCEABLE,
  },
  {
    method: 'get',
    path: '/prompts/{id}/versions',
    summary: "List a prompt's versions, oldest first",
    tags: ['Prompts'],
  },
  {
    method: 'get',
    path: '/prompts/{id}/versions/{version}',
    summary: 'Get one version of a prompt',
    tags: ['Prompts'],
  },
  {
    method: 'delete',
    path: '/prompts/{id}',
    summary: 'Delete a prompt; refused (409) while targets of configs name it, unless `force=true`',
    tags: ['Prompts'],
    ...FORCEABLE,
  },
  {
    method: 'post',
    path: '/prompts/partials',
    summary: 'Store a partial (`{{>slug}}` in templates): version 1, published',
    tags: ['Prompts'],
    requestBody: CreatePromptPartialBody,
  },
  {
    method: 'get',
    path: '/prompts/partials',
    summary: "List the workspace's prompt partials",
    tags: ['Prompts'],
  },
  {
    method: 'get',
    path: '/prompts/partials/{id}',
    summary: 'Get a partial by slug or id',
    tags: ['Prompts'],
  },
  {
    method: 'put',
    path: '/prompts/partials/{id}',
    summary:
      'Make the next version of a partial; the published version stays. Refused (409) when prompts that include its latest would fail, unless `force=true`',
    tags: ['Prompts'],
    requestBody: UpdatePromptPartialBody,
    ...FORCEABLE,
  },
  {
    method: 'put',
    path: '/prompts/partials/{id}/publish',
    summary:
      'Publish a version of a partial; refused (409) when prompts that include it would fail, unless `force=true`',
    tags: ['Prompts'],
    requestBody: PublishBody,
    ...FORCEABLE,
  },
  {
    method: 'get',
    path: '/prompts/partials/{id}/versions',
    summary: "List a partial's versions, oldest first",
    tags: ['Prompts'],
  },
  {
    method: 'get',
    path: '/prompts/partials/{id}/versions/{version}',
    summary: 'Get one version of a partial',
    tags: ['Prompts'],
  },
  {
    method: 'delete',
    path: '/prompts/partials/{id}',
    summary: 'Delete a partial; refused (409) while prompts include it, unless `force=true`',
    tags: ['Prompts'],
    ...FORCEABLE,
  },
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
    parameters: [
      POLICY_WORKSPACE,
      {
        name: 'status',
        in: 'query',
        schema: { type: 'string', enum: ['active', 'archived'], default: 'active' },
      },
      { name: 'type', in: 'query', schema: { type: 'string', enum: ['requests', 'tokens'] } },
      { name: 'unit', in: 'query', schema: { type: 'string', enum: ['rpm', 'rph', 'rpd'] } },
      {
        name: 'page_size',
        in: 'query',
        description: `A page holds at most ${POLICY_PAGE_SIZE.max} policies; a larger page_size is answered ${POLICY_PAGE_SIZE.max} a page.`,
        schema: { type: 'integer', minimum: 0, default: POLICY_PAGE_SIZE.default },
      },
      { name: 'current_page', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
    ],
  },
  {
    method: 'get',
    path: '/policies/rate-limits/{id}',
    summary:
      'Get a rate-limit policy by its id (an org admin key finds it in any workspace; `workspace_id` narrows to one)',
    tags: ['Rate-limit policies'],
    parameters: [POLICY_WORKSPACE],
  },
  {
    method: 'put',
    path: '/policies/rate-limits/{id}',
    summary: 'Update a rate-limit policy (fields left out are kept); every node applies it within a second',
    tags: ['Rate-limit policies'],
    parameters: [POLICY_WORKSPACE],
    requestBody: UpdateRateLimitPolicyBody,
  },
  {
    method: 'patch',
    path: '/policies/rate-limits/{id}',
    summary: 'The same as PUT',
    tags: ['Rate-limit policies'],
    parameters: [POLICY_WORKSPACE],
    requestBody: UpdateRateLimitPolicyBody,
  },
  {
    method: 'delete',
    path: '/policies/rate-limits/{id}',
    summary: 'Delete a rate-limit policy',
    tags: ['Rate-limit policies'],
    parameters: [POLICY_WORKSPACE],
  },
  {
    method: 'delete',
    path: '/cache/semantic/entries/{id}',
    summary:
      'Remove one semantic cache entry (the `x-gateway-cache-entry-id` of an answer); `workspace_id` for org admins',
    tags: ['Semantic cache'],
    parameters: [{ name: 'workspace_id', in: 'query', schema: { type: 'string' } }],
  },
  {
    method: 'delete',
    path: '/cache/semantic/entries',
    summary:
      'Remove every semantic cache entry of a namespace (`namespace`, empty for none; `workspace_id`); answers `{deleted}`',
    tags: ['Semantic cache'],
    parameters: [
      { name: 'namespace', in: 'query', required: true, schema: { type: 'string' } },
      { name: 'workspace_id', in: 'query', schema: { type: 'string' } },
    ],
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
  {
    method: 'delete',
    path: '/workspaces/{id}',
    summary:
      'Delete a workspace (id or slug) of the organisation, but its home workspace: its keys and everything it stores stop working at once',
    tags: ['Workspaces'],
  },
];
