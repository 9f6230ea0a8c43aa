/**
 * Bodies of the management API: one TypeBox schema each, which validates the body, types it and
 * documents it in the OpenAPI document. Every object is closed, so a misspelt field is named in the
 * error rather than silently ignored.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { GatewayConfigSchema } from '../../../gateway/config/index.js';
import { checkMetadataLimits, longerThan } from '../../../core/metadata-limits.js';
import { compileValidator, fieldError } from '../../../core/validator/compile-validator.js';
import { withErrorMessage, withKeyErrorMessage } from '../../../core/validator/explain-error.js';
import { PROVIDER_TARGET_KEYS } from '../../../providers/types.js';
import { POLICY_KEYS } from '../../../gateway/rate-limits/policy-keys.js';

/** Slugs travel in headers (`x-gateway-virtual-key`, `x-gateway-config`) and as `@slug`, so they stay
 * plain: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const SlugField = withErrorMessage(
  Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$',
    description: 'Letters, digits, `.`, `_` and `-`; starts with a letter or digit; at most 100 characters.',
  }),
  'must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit',
);

const NameField = Type.String({ minLength: 1, maxLength: 200 });
const RoleField = Type.Union([Type.Literal('admin'), Type.Literal('member')]);
/** Up to the last second of year 9999: a larger number is no date, and past the store's bigint column. */
const ExpiresAtField = Type.Union([
  Type.Integer({ minimum: 0, maximum: 253_402_300_799, description: 'Unix seconds, at most year 9999.' }),
  Type.Null(),
]);

/**
 * Same limits as request metadata elsewhere in the API: 16 pairs, 64-character keys, 512-character values,
 * the lengths in characters (code points), which checkMetadataLimits counts after the schema
 * (core/metadata-limits.ts). Without U+0000, which PostgreSQL's jsonb cannot hold: stored in a record's JSON
 * text, it made every later metadata filter over those records fail.
 */
export const MetadataField = withKeyErrorMessage(
  Type.Record(
    Type.String({ pattern: '^[^\\u0000]+$' }),
    withErrorMessage(Type.String({ pattern: '^[^\\u0000]*$' }), 'must hold no U+0000'),
    {
      additionalProperties: false,
      maxProperties: 16,
      description: 'Up to 16 string pairs; keys of 1 to 64 characters, values of at most 512; no U+0000.',
    },
  ),
  'is not a valid key: keys are 1 to 64 characters, and hold no U+0000',
);

function Closed<T extends Parameters<typeof Type.Object>[0]>(properties: T, id: string) {
  return Type.Object(properties, { additionalProperties: false, $id: id });
}

export const CreateApiKeyBody = Closed(
  {
    name: NameField,
    role: RoleField,
    expires_at: Type.Optional(ExpiresAtField),
    metadata: Type.Optional(MetadataField),
  },
  'CreateApiKeyBody',
);

export const UpdateApiKeyBody = Closed(
  {
    name: Type.Optional(NameField),
    role: Type.Optional(RoleField),
    expires_at: Type.Optional(ExpiresAtField),
    metadata: Type.Optional(MetadataField),
  },
  'UpdateApiKeyBody',
);

/** The provider settings a virtual key or catalog provider may store: the config's own keys and schemas. */
const ProviderSettings = Type.Pick(GatewayConfigSchema, [...PROVIDER_TARGET_KEYS]);

export const CreateCredentialBody = Type.Composite(
  [
    Type.Object({
      slug: SlugField,
      name: Type.Optional(NameField),
      provider: Type.String({ minLength: 1, description: 'A supported provider name, e.g. `openai`.' }),
    }),
    ProviderSettings,
  ],
  { additionalProperties: false, $id: 'CreateCredentialBody' },
);

/** A setting given as null is removed from the stored credential; one left out is kept. */
const NullableSettings = Type.Object(
  Object.fromEntries(
    Object.entries(ProviderSettings.properties).map(([key, schema]) => [
      key,
      Type.Optional(Type.Union([Type.Optional(schema as TSchema, false), Type.Null()])),
    ]),
  ),
);

export const UpdateCredentialBody = Type.Composite(
  [
    Type.Object({
      name: Type.Optional(NameField),
      provider: Type.Optional(Type.String({ minLength: 1 })),
    }),
    NullableSettings,
  ],
  { additionalProperties: false, $id: 'UpdateCredentialBody' },
);

const ConfigObject = Type.Object(
  {},
  { description: 'A config object (see components.schemas.Config); checked in full when stored.' },
);

export const CreateConfigBody = Closed(
  { slug: SlugField, name: Type.Optional(NameField), config: ConfigObject },
  'CreateConfigBody',
);

export const UpdateConfigBody = Closed(
  {
    name: Type.Optional(NameField),
    config: Type.Optional(ConfigObject),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
  },
  'UpdateConfigBody',
);

const GuardrailObject = Type.Object(
  {},
  {
    description:
      'A guardrail definition, as an inline item of `input_guardrails` / `output_guardrails` (see ' +
      'components.schemas.Guardrail); checked in full when stored.',
  },
);

export const CreateGuardrailBody = Closed(
  { slug: SlugField, name: Type.Optional(NameField), guardrail: GuardrailObject },
  'CreateGuardrailBody',
);

export const UpdateGuardrailBody = Closed(
  { name: Type.Optional(NameField), guardrail: Type.Optional(GuardrailObject) },
  'UpdateGuardrailBody',
);

/** Prompts: `partials` is a path of its own under /v1/prompts, so no prompt may take it as its slug. */
const PromptSlugField = withErrorMessage(
  Type.String({
    pattern: '^(?!partials$)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$',
    description: SlugField.description + ' Not `partials`.',
  }),
  'must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit, and not "partials"',
);

const TemplateField = Type.String({
  minLength: 1,
  maxLength: 256 * 1024,
  description:
    'The Mustache template: for `chat`, a JSON `messages` array written as Mustache text, every `{{variable}}` ' +
    'inside a JSON string; for `completion`, the text prompt. `{{>slug}}` includes a partial.',
});

const PromptFields = {
  name: Type.Optional(NameField),
  string: TemplateField,
  template_type: Type.Optional(
    Type.Union([Type.Literal('chat'), Type.Literal('completion')], {
      description: '`chat` (default): calls chat completions; `completion`: calls text completions.',
    }),
  ),
  parameters: Type.Optional(
    Type.Object({}, { description: 'Body fields of the request: model, temperature, max_tokens, tools …' }),
  ),
  virtual_key: Type.Optional(Type.String({ minLength: 1, description: 'A virtual key slug.' })),
  provider: Type.Optional(
    Type.String({ minLength: 1, description: 'A catalog provider (`@slug`) or a provider name.' }),
  ),
  config: Type.Optional(
    Type.Union([Type.String({ minLength: 1 }), Type.Object({})], {
      description: "A stored config's id or slug, or an inline config object; checked in full when stored.",
    }),
  ),
};

export const CreatePromptBody = Closed({ slug: PromptSlugField, ...PromptFields }, 'CreatePromptBody');

export const UpdatePromptBody = Closed(
  { slug: Type.Optional(PromptSlugField), ...PromptFields },
  'UpdatePromptBody',
);

export const PublishBody = Closed(
  // The largest version a reference can name (`<slug>@<n>`, prompt-reference.ts).
  { version: Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'The version to publish.' }) },
  'PublishBody',
);

export const CreatePromptPartialBody = Closed(
  { slug: SlugField, name: Type.Optional(NameField), string: TemplateField },
  'CreatePromptPartialBody',
);

export const UpdatePromptPartialBody = Closed(
  { slug: Type.Optional(SlugField), name: Type.Optional(NameField), string: TemplateField },
  'UpdatePromptPartialBody',
);

export const CreateWorkspaceBody = Closed({ name: NameField, slug: SlugField }, 'CreateWorkspaceBody');

const PolicyKeyField = withErrorMessage(
  Type.String({
    pattern: `^(${POLICY_KEYS.join('|')}|metadata\\.[\\s\\S]{1,128})$`,
    description: `One of ${POLICY_KEYS.map((key) => `\`${key}\``).join(', ')}, or \`metadata.<name>\`.`,
  }),
  `must be one of ${POLICY_KEYS.join(', ')}, or metadata.<name>`,
);

const ConditionValueField = Type.Union([
  Type.String({ minLength: 1, maxLength: 512 }),
  Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { minItems: 1, maxItems: 100 }),
]);

const PolicyCondition = Type.Object(
  {
    key: PolicyKeyField,
    value: ConditionValueField,
    excludes: Type.Optional(ConditionValueField),
  },
  {
    additionalProperties: false,
    description:
      '`value`: a value, any of an array, `*` (any value) or a prefix ending in `/*` (`@openai/*`); ' +
      '`excludes`: values the call must not have.',
  },
);

const PolicyGroupBy = Type.Object({ key: PolicyKeyField }, { additionalProperties: false });

/** The most characters (code points) a policy's `name` has: checked after the schema (withPolicyNameRules). */
const POLICY_NAME_MAX = 255;

const PolicyFields = {
  name: Type.String({ description: `At most ${POLICY_NAME_MAX} characters.` }),
  conditions: Type.Array(PolicyCondition, { minItems: 1, maxItems: 32 }),
  group_by: Type.Array(PolicyGroupBy, { minItems: 1, maxItems: 8 }),
  type: Type.Union([Type.Literal('requests'), Type.Literal('tokens')]),
  unit: Type.Union([Type.Literal('rpm'), Type.Literal('rph'), Type.Literal('rpd')]),
  value: Type.Number({ minimum: 1, maximum: 1e12, description: 'The limit, per `unit`.' }),
};

const TenantFields = {
  workspace_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        "Id or slug of a workspace of the caller's organisation; an organisation-level admin key only.",
    }),
  ),
  organisation_id: Type.Optional(
    withErrorMessage(
      Type.String({
        pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      }),
      'must be a UUID',
    ),
  ),
};

export const CreateRateLimitPolicyBody = Closed(
  {
    ...PolicyFields,
    name: Type.Optional(PolicyFields.name),
    ...TenantFields,
  },
  'CreateRateLimitPolicyBody',
);

export const UpdateRateLimitPolicyBody = Closed(
  {
    name: Type.Optional(PolicyFields.name),
    conditions: Type.Optional(PolicyFields.conditions),
    group_by: Type.Optional(PolicyFields.group_by),
    type: Type.Optional(PolicyFields.type),
    unit: Type.Optional(PolicyFields.unit),
    value: Type.Optional(PolicyFields.value),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
  },
  'UpdateRateLimitPolicyBody',
);

export type CreateApiKey = Static<typeof CreateApiKeyBody>;
export type UpdateApiKey = Static<typeof UpdateApiKeyBody>;
export type CreateCredential = Static<typeof CreateCredentialBody>;
export type UpdateCredential = {
  name?: string;
  provider?: string;
} & { [K in (typeof PROVIDER_TARGET_KEYS)[number]]?: unknown };
export type CreateConfig = Static<typeof CreateConfigBody>;
export type UpdateConfig = Static<typeof UpdateConfigBody>;
export type CreateGuardrail = Static<typeof CreateGuardrailBody>;
export type UpdateGuardrail = Static<typeof UpdateGuardrailBody>;
export type CreateWorkspace = Static<typeof CreateWorkspaceBody>;
export type CreatePrompt = Static<typeof CreatePromptBody>;
export type UpdatePrompt = Static<typeof UpdatePromptBody>;
export type CreateRateLimitPolicy = Static<typeof CreateRateLimitPolicyBody>;
export type UpdateRateLimitPolicy = Static<typeof UpdateRateLimitPolicyBody>;

function bodyValidator<T extends TSchema>(schema: T) {
  const validator = compileValidator(schema, {
    code: 'invalid_body',
    rootPath: '',
    subject: 'The request body',
    rootParam: null,
  });
  return (body: unknown): Static<T> => validator.assert(body);
}

/** A body whose `metadata` is held to its limits too (checkMetadataLimits). */
function withMetadataLimits<T extends { metadata?: Record<string, string> | null }>(
  validate: (body: unknown) => T,
): (body: unknown) => T {
  return (body) => {
    const valid = validate(body);
    checkMetadataLimits(valid.metadata);
    return valid;
  };
}

export const validateCreateApiKey = withMetadataLimits(bodyValidator(CreateApiKeyBody));
export const validateUpdateApiKey = withMetadataLimits(bodyValidator(UpdateApiKeyBody));
export const validateCreateCredential = bodyValidator(CreateCredentialBody);
export const validateUpdateCredential = bodyValidator(UpdateCredentialBody) as (
  body: unknown,
) => UpdateCredential;
export const validateCreateConfig = bodyValidator(CreateConfigBody);
export const validateUpdateConfig = bodyValidator(UpdateConfigBody);
export const validateCreateGuardrail = bodyValidator(CreateGuardrailBody);
export const validateUpdateGuardrail = bodyValidator(UpdateGuardrailBody);
export const validateCreateWorkspace = bodyValidator(CreateWorkspaceBody);
export const validateCreatePrompt = bodyValidator(CreatePromptBody);
export const validateUpdatePrompt = bodyValidator(UpdatePromptBody);
export const validatePublish = bodyValidator(PublishBody);
export const validateCreatePromptPartial = bodyValidator(CreatePromptPartialBody);
export const validateUpdatePromptPartial = bodyValidator(UpdatePromptPartialBody);
/**
 * A policy's `name` is at most 255 characters, counted as code points as the specification and every
 * metadata limit count them (a schema's `maxLength` compares UTF-16 code units: 255 emoji would be 510), and
 * holds no U+0000, which PostgreSQL cannot keep (named here, on either store, rather than by the store).
 */
function withPolicyNameRules<T extends { name?: string | undefined }>(
  validate: (body: unknown) => T,
): (body: unknown) => T {
  return (body) => {
    const valid = validate(body);
    if (valid.name !== undefined && longerThan(valid.name, POLICY_NAME_MAX)) {
      throw fieldError('invalid_body', 'name', `must be at most ${POLICY_NAME_MAX} characters`);
    }
    if (valid.name?.includes('\u0000')) throw fieldError('invalid_body', 'name', 'must hold no U+0000');
    return valid;
  };
}

export const validateCreateRateLimitPolicy = withPolicyNameRules(bodyValidator(CreateRateLimitPolicyBody));
export const validateUpdateRateLimitPolicy = withPolicyNameRules(bodyValidator(UpdateRateLimitPolicyBody));
