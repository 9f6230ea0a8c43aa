/**
 * Valid bodies and configs that must pass, exported for reuse by other tests.
 */

export const richChatBody = {
  model: 'gpt-4o',
  messages: [
    { role: 'developer', content: 'Answer in JSON.' },
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }], name: 'policy' },
    {
      role: 'user',
      content: [
        {
          type: 'text',
          text: 'What is in this image, and what is the weather in Paris?',
          cache_control: { type: 'ephemeral' },
        },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'file', file: { file_id: 'file-abc' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":18}' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants…', signature: 'sig' },
        { type: 'text', text: 'Noted.' },
      ],
    },
    { role: 'function', name: 'legacy_fn', content: null },
    { role: 'user', content: 'Thanks' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
          additionalProperties: false,
        },
        strict: true,
      },
    },
  ],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
  parallel_tool_calls: false,
  response_format: {
    type: 'json_schema',
    json_schema: {
      name: 'weather_answer',
      description: 'A weather answer',
      schema: {
        type: 'object',
        properties: { answer: { type: 'string' } },
        required: ['answer'],
        additionalProperties: false,
      },
      strict: true,
    },
  },
  stream: true,
  stream_options: { include_usage: true },
  temperature: 0.2,
  top_p: 1,
  n: 2,
  frequency_penalty: -2,
  presence_penalty: 2,
  logit_bias: { '50256': -100, '15': 100 },
  logprobs: true,
  top_logprobs: 20,
  max_tokens: 0,
  max_completion_tokens: 1024,
  seed: JSON.parse('9223372036854775807') as number,
  stop: ['\n\n', 'END', 'STOP', '###'],
  user: 'user-1234',
  thinking: { type: 'enabled', budget_tokens: 1024 },
  metadata: { team: 'search' },
  reasoning_effort: 'low',
  // Provider-specific parameters pass through.
  top_k: 40,
  safe_prompt: true,
};

export const minimalChatBodies: object[] = [
  { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  {
    model: 'm',
    messages: [{ role: 'user', content: '' }],
    stop: 'END',
    seed: JSON.parse('-9223372036854775807') as number,
  },
  {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    temperature: null,
    top_p: null,
    n: null,
    stream: null,
  },
  {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    tool_choice: 'required',
    function_call: { name: 'f' },
  },
  { model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } },
  {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    response_format: { type: 'text' },
    thinking: { type: 'disabled' },
  },
  {
    model: 'm',
    messages: [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }],
  },
  { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false, stream_options: null },
  {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    functions: [{ name: 'f', parameters: {} }],
    function_call: 'auto',
  },
];

export const goodCompletionBodies: object[] = [
  { model: 'i', prompt: 'Say this is a test' },
  { model: 'i', prompt: ['a', 'b'], best_of: 3, n: 2, echo: true, logprobs: 5, max_tokens: 0, suffix: null },
  { model: 'i', prompt: [1212, 318], stream: true, stream_options: { include_usage: false }, seed: 1 },
  {
    model: 'i',
    prompt: [[1212, 318], [13]],
    logit_bias: { '50256': -100 },
    stop: null,
    temperature: 2,
    top_p: 0,
  },
  { model: 'i', prompt: null, best_of: 1, stream: true },
  { model: 'i', prompt: '', best_of: 0, user: 'u', custom_provider_field: { a: 1 } },
];

export const goodEmbeddingBodies: object[] = [
  { model: 'e', input: 'The quick brown fox' },
  { model: 'e', input: ['a', 'b'], encoding_format: 'base64', dimensions: 256, user: 'u' },
  { model: 'e', input: [1, 2, 3], encoding_format: 'float' },
  { model: 'e', input: [[1, 2], [3]], input_type: 'search_document' },
];

const creds = { provider: 'openai', api_key: 'sk-primary' };

/** A nested fallback → loadbalance → conditional config that uses every config key somewhere. */
export const richConfig = {
  name: 'production-router',
  strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503] },
  retry: { attempts: 3, on_status_codes: [429, 503], use_retry_after_headers: true },
  cache: { mode: 'semantic', max_age: 3600 },
  request_timeout: 30000,
  strict_compat_compliance: false,
  forward_headers: ['x-user-id', 'X-Trace'],
  override_params: { temperature: 0.3, max_tokens: 512 },
  before_request_hooks: [
    {
      id: 'pii-check',
      type: 'guardrail',
      checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}' } }],
      on_fail: { feedback: { value: -1, weight: 1, metadata: { reason: 'pii' } }, deny: true },
      on_success: { feedback: { value: 1, weight: 0.5, metadata: {} }, deny: false },
    },
  ],
  after_request_hooks: [
    {
      id: 'tone',
      type: 'mutator',
      async: true,
      checks: [{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 500 } }],
      on_fail: { feedback: { value: -1 } },
      on_success: { feedback: { value: 1 } },
    },
  ],
  input_guardrails: [
    'gr-stored-1',
    {
      id: 'inline-1',
      deny: true,
      async: false,
      'default.contains': { words: ['x'] },
      on_fail: { feedback: { value: 0 } },
    },
  ],
  output_guardrails: [
    'gr-out',
    { id: 'inline-2', on_fail: { deny: true, feedback: { weight: 2 } }, on_success: { deny: false } },
  ],
  targets: [
    {
      strategy: { mode: 'loadbalance' },
      targets: [
        {
          ...creds,
          weight: 0.7,
          vendora_organization: 'org-1',
          vendora_project: 'proj-1',
          custom_host: 'http://127.0.0.1:8000/v1',
          cb_config: {
            failure_threshold: 5,
            cooldown_interval: 30000,
            failure_status_codes: [500, 502, 503],
          },
        },
        { virtual_key: 'vk-openai-backup', weight: 0.3, on_status_codes: [429] },
        { provider: '@anthropic-prod', weight: 0, override_params: { model: 'claude-sonnet-4' } },
      ],
    },
    {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': { $eq: 'paid' } }, then: 'bedrock' },
          { query: { 'params.model': { $regex: '^gemini' } }, then: 'vertex' },
        ],
        default: 'azure',
      },
      targets: [
        {
          name: 'bedrock',
          provider: 'bedrock',
          cloudc_access_key_id: 'AKIA',
          cloudc_secret_access_key: 'secret',
          cloudc_region: 'us-east-1',
          cloudc_session_token: 'token',
          cloudc_base_model: 'cohere.embed-english-v3',
        },
        {
          name: 'vertex',
          provider: 'vertex-ai',
          cloudb_region: 'global',
          cloudb_project_id: 'proj',
          cloudb_service_account_json: { type: 'service_account', client_email: 'a@b.c', private_key: 'k' },
          cloudb_request_type: 'shared',
          cloudb_shared_request_type: 'priority',
        },
        {
          name: 'azure',
          provider: 'azure-openai',
          api_key: 'az-key',
          resource_name: 'res',
          deployment_id: 'dep',
          api_version: '2024-10-21',
          deployments: [
            { deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true },
            { deployment_id: 'mini', alias: 'gpt-4o-mini', api_version: '2024-10-21' },
          ],
        },
        {
          name: 'azure-foundry',
          provider: 'azure-ai',
          cloudd_region: 'eastus',
          cloudd_deployment_name: 'dep',
          cloudd_deployment_type: 'managed',
          cloudd_api_version: '2024-05-01-preview',
          cloudd_resource_name: 'res',
          cloudd_deployment_id: 'dep-id',
          cloudd_model_name: 'Llama-3',
        },
        {
          name: 'foundry-serverless',
          provider: 'azure-ai',
          cloudd_endpoint_name: 'ep',
          cloudd_deployment_type: 'serverless',
        },
        { name: 'prompt', prompt_id: 'pp-123' },
        { name: 'single', strategy: { mode: 'single' }, targets: [creds] },
      ],
    },
  ],
};

/** Keys left out of the routable rich config: `prompt_id`, which only a prompt completion routes, and the
 * hook lists, whose items show every shape the schema takes (a stored guardrail, a guardrail naming no
 * check) rather than checks that run. */
const NOT_ROUTED_KEYS = [
  'prompt_id',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
] as const;

type Node = Record<string, unknown>;

function withoutUnexecutedKeys(node: Node): Node {
  const out: Node = { ...node };
  for (const key of NOT_ROUTED_KEYS) delete out[key];
  const targets = node.targets as Node[] | undefined;
  // A target routed by prompt_id alone has nothing left to route with.
  if (targets) out.targets = targets.filter((t) => t.prompt_id === undefined).map(withoutUnexecutedKeys);
  return out;
}

/** The rich config as the gateway routes a chat completion: every key but those it refuses there. */
export const routableRichConfig = withoutUnexecutedKeys(richConfig);

export const goodConfigs: object[] = [
  creds,
  { virtual_key: 'vk' },
  { provider: '@openai-prod' },
  { provider: 'ollama', custom_host: 'https://models.internal/v1' },
  { cache: { mode: 'simple' } },
  { retry: { attempts: 0 } },
  { forward_headers: [] },
  { request_timeout: 1 },
  { strategy: { mode: 'single' }, targets: [creds] },
  { strategy: { mode: 'single' }, ...creds },
  // Priority and Flex PayGo on Vertex's global endpoint, with or without Provisioned Throughput first; on a
  // virtual key, whose region the config does not know.
  {
    provider: 'vertex-ai',
    cloudb_region: 'global',
    cloudb_project_id: 'p',
    cloudb_shared_request_type: 'flex',
  },
  {
    provider: 'vertex-ai',
    cloudb_region: 'global',
    cloudb_project_id: 'p',
    cloudb_request_type: 'shared',
    cloudb_shared_request_type: 'priority',
  },
  { virtual_key: 'vertex-prod', cloudb_shared_request_type: 'priority' },
];
