/**
 * Tables of bad request bodies and configs, each with the `param` the gateway must report.
 * Exported so HTTP-level tests can send every case through the server as well; the body of a
 * config case is the config object (send it as the `x-gateway-config` header; only a value starting
 * with `{` is read as inline JSON, so the array case is reported with param `x-gateway-config` there).
 */

export interface BadCase {
  name: string;
  body: object;
  param: string | null;
}

const msgs = [{ role: 'user', content: 'Hello' }];
const chat = (extra: object): object => ({ model: 'gpt-4o-mini', messages: msgs, ...extra });

export const chatBodyCases: BadCase[] = [
  { name: 'body is an array', body: [{ model: 'x' }], param: null },
  { name: 'model missing', body: { messages: msgs }, param: 'model' },
  { name: 'model empty', body: chat({ model: '' }), param: 'model' },
  { name: 'model not a string', body: chat({ model: 42 }), param: 'model' },
  { name: 'messages missing', body: { model: 'x' }, param: 'messages' },
  { name: 'messages empty', body: chat({ messages: [] }), param: 'messages' },
  { name: 'messages not an array', body: chat({ messages: 'hi' }), param: 'messages' },
  { name: 'message not an object', body: chat({ messages: ['hi'] }), param: 'messages[0]' },
  { name: 'role missing', body: chat({ messages: [{ content: 'x' }] }), param: 'messages[0].role' },
  {
    name: 'role unknown',
    body: chat({ messages: [...msgs, { role: 'robot', content: 'x' }] }),
    param: 'messages[1].role',
  },
  {
    name: 'user content missing',
    body: chat({ messages: [{ role: 'user' }] }),
    param: 'messages[0].content',
  },
  {
    name: 'user content a number',
    body: chat({ messages: [{ role: 'user', content: 7 }] }),
    param: 'messages[0].content',
  },
  {
    name: 'user content parts empty',
    body: chat({ messages: [{ role: 'user', content: [] }] }),
    param: 'messages[0].content',
  },
  {
    name: 'content part type unknown',
    body: chat({ messages: [{ role: 'user', content: [{ type: 'txt', text: 'x' }] }] }),
    param: 'messages[0].content[0].type',
  },
  {
    name: 'text part without text',
    body: chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }] }),
    param: 'messages[0].content[1].text',
  },
  {
    name: 'image part without url',
    body: chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }),
    param: 'messages[0].content[0].image_url.url',
  },
  {
    name: 'image detail unknown',
    body: chat({
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'ultra' } }],
        },
      ],
    }),
    param: 'messages[0].content[0].image_url.detail',
  },
  {
    name: 'system message with image part',
    body: chat({
      messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }],
    }),
    param: 'messages[0].content[0].type',
  },
  {
    name: 'assistant content null without tool_calls',
    body: chat({ messages: [...msgs, { role: 'assistant', content: null }] }),
    param: 'messages[1].content',
  },
  {
    name: 'assistant content missing without tool_calls',
    body: chat({ messages: [...msgs, { role: 'assistant' }] }),
    param: 'messages[1].content',
  },
  {
    name: 'user content null',
    body: chat({ messages: [{ role: 'user', content: null }] }),
    param: 'messages[0].content',
  },
  {
    name: 'tool call without function name',
    body: chat({
      messages: [
        ...msgs,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { arguments: '{}' } }],
        },
      ],
    }),
    param: 'messages[1].tool_calls[0].function.name',
  },
  {
    name: 'tool message without tool_call_id',
    body: chat({ messages: [...msgs, { role: 'tool', content: 'x' }] }),
    param: 'messages[1].tool_call_id',
  },
  { name: 'temperature above 2', body: chat({ temperature: 2.5 }), param: 'temperature' },
  { name: 'temperature negative', body: chat({ temperature: -0.1 }), param: 'temperature' },
  { name: 'temperature a string', body: chat({ temperature: 'warm' }), param: 'temperature' },
  { name: 'top_p above 1', body: chat({ top_p: 1.01 }), param: 'top_p' },
  { name: 'frequency_penalty below -2', body: chat({ frequency_penalty: -2.5 }), param: 'frequency_penalty' },
  { name: 'presence_penalty above 2', body: chat({ presence_penalty: 3 }), param: 'presence_penalty' },
  { name: 'n zero', body: chat({ n: 0 }), param: 'n' },
  { name: 'n above 128', body: chat({ n: 129 }), param: 'n' },
  { name: 'n not an integer', body: chat({ n: 1.5 }), param: 'n' },
  { name: 'top_logprobs above 20', body: chat({ logprobs: true, top_logprobs: 21 }), param: 'top_logprobs' },
  { name: 'top_logprobs without logprobs', body: chat({ top_logprobs: 3 }), param: 'top_logprobs' },
  {
    name: 'top_logprobs with logprobs false',
    body: chat({ logprobs: false, top_logprobs: 3 }),
    param: 'top_logprobs',
  },
  { name: 'logprobs not a boolean', body: chat({ logprobs: 1 }), param: 'logprobs' },
  { name: 'stop with 5 sequences', body: chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), param: 'stop' },
  { name: 'stop a number', body: chat({ stop: 5 }), param: 'stop' },
  { name: 'stop item a number', body: chat({ stop: ['a', 5] }), param: 'stop[1]' },
  {
    name: 'logit_bias value above 100',
    body: chat({ logit_bias: { '50256': 101 } }),
    param: 'logit_bias.50256',
  },
  {
    name: 'logit_bias value a string',
    body: chat({ logit_bias: { '50256': 'ban' } }),
    param: 'logit_bias.50256',
  },
  {
    name: 'logit_bias key not a token id',
    body: chat({ logit_bias: { hello: 1 } }),
    param: 'logit_bias.hello',
  },
  {
    name: 'tools above 128',
    body: chat({
      tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })),
    }),
    param: 'tools',
  },
  {
    name: 'tool type not function',
    body: chat({ tools: [{ type: 'retrieval', function: { name: 'f' } }] }),
    param: 'tools[0].type',
  },
  {
    name: 'tool without function',
    body: chat({ tools: [{ type: 'function' }] }),
    param: 'tools[0].function',
  },
  {
    name: 'tool function without name',
    body: chat({ tools: [{ type: 'function', function: {} }] }),
    param: 'tools[0].function.name',
  },
  {
    name: 'tool parameters not an object',
    body: chat({ tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }),
    param: 'tools[0].function.parameters',
  },
  { name: 'tool_choice unknown string', body: chat({ tool_choice: 'any' }), param: 'tool_choice' },
  {
    name: 'tool_choice object wrong type',
    body: chat({ tool_choice: { type: 'tool', function: { name: 'f' } } }),
    param: 'tool_choice.type',
  },
  {
    name: 'tool_choice without function name',
    body: chat({ tool_choice: { type: 'function', function: {} } }),
    param: 'tool_choice.function.name',
  },
  { name: 'tool_choice a number', body: chat({ tool_choice: 1 }), param: 'tool_choice' },
  { name: 'functions empty', body: chat({ functions: [] }), param: 'functions' },
  {
    name: 'functions above 128',
    body: chat({ functions: Array.from({ length: 129 }, (_, i) => ({ name: `f${i}` })) }),
    param: 'functions',
  },
  {
    name: 'function without name',
    body: chat({ functions: [{ description: 'x' }] }),
    param: 'functions[0].name',
  },
  { name: 'function_call unknown string', body: chat({ function_call: 'required' }), param: 'function_call' },
  {
    name: 'function_call object without name',
    body: chat({ function_call: {} }),
    param: 'function_call.name',
  },
  {
    name: 'response_format type unknown',
    body: chat({ response_format: { type: 'yaml' } }),
    param: 'response_format.type',
  },
  { name: 'response_format a string', body: chat({ response_format: 'json' }), param: 'response_format' },
  {
    name: 'response_format type missing',
    body: chat({ response_format: {} }),
    param: 'response_format.type',
  },
  {
    name: 'json_schema without json_schema',
    body: chat({ response_format: { type: 'json_schema' } }),
    param: 'response_format.json_schema',
  },
  {
    name: 'json_schema without name',
    body: chat({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }),
    param: 'response_format.json_schema.name',
  },
  { name: 'stream a string', body: chat({ stream: 'yes' }), param: 'stream' },
  {
    name: 'stream_options without stream',
    body: chat({ stream_options: { include_usage: true } }),
    param: 'stream_options',
  },
  {
    name: 'stream_options with stream false',
    body: chat({ stream: false, stream_options: { include_usage: true } }),
    param: 'stream_options',
  },
  {
    name: 'stream_options.include_usage not a boolean',
    body: chat({ stream: true, stream_options: { include_usage: 'yes' } }),
    param: 'stream_options.include_usage',
  },
  { name: 'seed not an integer', body: chat({ seed: 1.5 }), param: 'seed' },
  { name: 'seed above int64', body: chat({ seed: 1e19 }), param: 'seed' },
  { name: 'seed below int64', body: chat({ seed: -1e19 }), param: 'seed' },
  { name: 'seed a string', body: chat({ seed: '42' }), param: 'seed' },
  { name: 'max_tokens negative', body: chat({ max_tokens: -1 }), param: 'max_tokens' },
  { name: 'max_tokens not an integer', body: chat({ max_tokens: 10.5 }), param: 'max_tokens' },
  {
    name: 'max_completion_tokens negative',
    body: chat({ max_completion_tokens: -5 }),
    param: 'max_completion_tokens',
  },
  {
    name: 'parallel_tool_calls a string',
    body: chat({ parallel_tool_calls: 'true' }),
    param: 'parallel_tool_calls',
  },
  { name: 'user a number', body: chat({ user: 7 }), param: 'user' },
  {
    name: 'thinking budget below 1024',
    body: chat({ thinking: { type: 'enabled', budget_tokens: 1000 } }),
    param: 'thinking.budget_tokens',
  },
  {
    name: 'thinking budget missing',
    body: chat({ thinking: { type: 'enabled' } }),
    param: 'thinking.budget_tokens',
  },
  {
    name: 'thinking type unknown',
    body: chat({ thinking: { type: 'on', budget_tokens: 2048 } }),
    param: 'thinking.type',
  },
  // OpenAI's Metadata: 16 pairs, keys of at most 64 characters, string values of at most 512.
  {
    name: 'metadata of 17 pairs',
    body: chat({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }),
    param: 'metadata',
  },
  {
    name: 'metadata key of 65 characters',
    body: chat({ metadata: { ['k'.repeat(65)]: 'v' } }),
    param: `metadata.${'k'.repeat(65)}`,
  },
  {
    name: 'metadata value of 513 characters',
    body: chat({ metadata: { k: 'v'.repeat(513) } }),
    param: 'metadata.k',
  },
  { name: 'metadata value a number', body: chat({ metadata: { n: 1 } }), param: 'metadata.n' },
];

const comp = (extra: object): object => ({
  model: 'gpt-3.5-turbo-instruct',
  prompt: 'Say this is a test',
  ...extra,
});

export const completionBodyCases: BadCase[] = [
  { name: 'body is an array of prompts', body: ['Say this is a test'], param: null },
  { name: 'model missing', body: { prompt: 'x' }, param: 'model' },
  { name: 'prompt missing', body: { model: 'x' }, param: 'prompt' },
  { name: 'prompt a number', body: comp({ prompt: 5 }), param: 'prompt' },
  { name: 'prompt an object', body: comp({ prompt: { text: 'x' } }), param: 'prompt' },
  { name: 'prompt mixed strings and numbers', body: comp({ prompt: ['a', 1] }), param: 'prompt[1]' },
  { name: 'prompt tokens not integers', body: comp({ prompt: [1, 2.5] }), param: 'prompt[1]' },
  { name: 'prompt token arrays with an empty one', body: comp({ prompt: [[1, 2], []] }), param: 'prompt[1]' },
  { name: 'prompt array of booleans', body: comp({ prompt: [true] }), param: 'prompt[0]' },
  { name: 'best_of above 20', body: comp({ best_of: 21 }), param: 'best_of' },
  { name: 'best_of negative', body: comp({ best_of: -1 }), param: 'best_of' },
  { name: 'best_of not greater than n', body: comp({ best_of: 2, n: 2 }), param: 'best_of' },
  { name: 'best_of with stream', body: comp({ best_of: 3, stream: true }), param: 'best_of' },
  { name: 'echo a string', body: comp({ echo: 'yes' }), param: 'echo' },
  { name: 'logprobs above 5', body: comp({ logprobs: 6 }), param: 'logprobs' },
  { name: 'logprobs a boolean', body: comp({ logprobs: true }), param: 'logprobs' },
  { name: 'max_tokens negative', body: comp({ max_tokens: -1 }), param: 'max_tokens' },
  { name: 'n above 128', body: comp({ n: 200 }), param: 'n' },
  { name: 'temperature above 2', body: comp({ temperature: 9 }), param: 'temperature' },
  { name: 'top_p negative', body: comp({ top_p: -1 }), param: 'top_p' },
  { name: 'frequency_penalty above 2', body: comp({ frequency_penalty: 2.01 }), param: 'frequency_penalty' },
  { name: 'presence_penalty below -2', body: comp({ presence_penalty: -3 }), param: 'presence_penalty' },
  { name: 'logit_bias below -100', body: comp({ logit_bias: { '11': -101 } }), param: 'logit_bias.11' },
  { name: 'stop with 5 sequences', body: comp({ stop: ['1', '2', '3', '4', '5'] }), param: 'stop' },
  { name: 'suffix a number', body: comp({ suffix: 3 }), param: 'suffix' },
  { name: 'seed not an integer', body: comp({ seed: 0.5 }), param: 'seed' },
  {
    name: 'stream_options without stream',
    body: comp({ stream_options: { include_usage: true } }),
    param: 'stream_options',
  },
  { name: 'user a boolean', body: comp({ user: false }), param: 'user' },
];

const emb = (extra: object): object => ({ model: 'text-embedding-3-small', input: 'hello', ...extra });

export const embeddingBodyCases: BadCase[] = [
  { name: 'body is an array', body: ['hello'], param: null },
  { name: 'model missing', body: { input: 'x' }, param: 'model' },
  { name: 'model empty', body: emb({ model: '' }), param: 'model' },
  { name: 'input missing', body: { model: 'x' }, param: 'input' },
  { name: 'input empty string', body: emb({ input: '' }), param: 'input' },
  { name: 'input empty array', body: emb({ input: [] }), param: 'input' },
  { name: 'input array with an empty string', body: emb({ input: ['a', ''] }), param: 'input[1]' },
  { name: 'input a number', body: emb({ input: 5 }), param: 'input' },
  { name: 'input mixed types', body: emb({ input: ['a', 1] }), param: 'input[1]' },
  { name: 'input token arrays with an empty one', body: emb({ input: [[1], []] }), param: 'input[1]' },
  { name: 'input token not an integer', body: emb({ input: [1.5] }), param: 'input[0]' },
  {
    name: 'input above 2048 items',
    body: emb({ input: Array.from({ length: 2049 }, () => 'a') }),
    param: 'input',
  },
  { name: 'encoding_format unknown', body: emb({ encoding_format: 'hex' }), param: 'encoding_format' },
  { name: 'dimensions zero', body: emb({ dimensions: 0 }), param: 'dimensions' },
  { name: 'dimensions not an integer', body: emb({ dimensions: 1.5 }), param: 'dimensions' },
  { name: 'user a number', body: emb({ user: 1 }), param: 'user' },
];

const P = { provider: 'openai', api_key: 'sk-test' };
const V = { provider: 'vertex-ai', cloudb_region: 'global', cloudb_project_id: 'proj' };

export const configCases: BadCase[] = [
  { name: 'config is an array', body: [P], param: 'config' },
  { name: 'empty config', body: {}, param: 'config' },
  {
    name: 'no required combination',
    body: { name: 'only-a-name', strict_compat_compliance: true },
    param: 'config',
  },
  { name: 'unknown root key', body: { ...P, retries: 3 }, param: 'config.retries' },
  { name: 'provider without credentials', body: { provider: 'openai' }, param: 'config.api_key' },
  {
    name: 'provider with only a cache',
    body: { provider: 'openai', cache: { mode: 'simple' } },
    param: 'config.api_key',
  },
  {
    name: 'provider with half the cloud C credentials',
    body: { provider: 'bedrock', cloudc_access_key_id: 'AKIA' },
    param: 'config.api_key',
  },
  { name: 'provider empty', body: { provider: '', api_key: 'x' }, param: 'config.provider' },
  { name: 'api_key a number', body: { provider: 'openai', api_key: 5 }, param: 'config.api_key' },
  { name: 'strategy without mode', body: { strategy: {}, targets: [P] }, param: 'config.strategy.mode' },
  {
    name: 'strategy mode unknown',
    body: { strategy: { mode: 'roundrobin' }, targets: [P] },
    param: 'config.strategy.mode',
  },
  {
    name: 'strategy unknown key',
    body: { strategy: { mode: 'fallback', retry: 1 }, targets: [P] },
    param: 'config.strategy.retry',
  },
  {
    name: 'fallback without targets',
    body: { ...P, strategy: { mode: 'fallback' } },
    param: 'config.targets',
  },
  {
    name: 'loadbalance with empty targets',
    body: { strategy: { mode: 'loadbalance' }, targets: [] },
    param: 'config.targets',
  },
  {
    name: 'targets without strategy',
    body: { cache: { mode: 'simple' }, targets: [P] },
    param: 'config.strategy',
  },
  {
    name: 'single with two targets',
    body: { strategy: { mode: 'single' }, targets: [P, P] },
    param: 'config.targets',
  },
  {
    name: 'conditional without conditions',
    body: { strategy: { mode: 'conditional', default: 'a' }, targets: [{ ...P, name: 'a' }] },
    param: 'config.strategy.conditions',
  },
  {
    name: 'conditional with empty conditions',
    body: { strategy: { mode: 'conditional', conditions: [], default: 'a' }, targets: [{ ...P, name: 'a' }] },
    param: 'config.strategy.conditions',
  },
  {
    name: 'conditional without default',
    body: {
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }] },
      targets: [{ ...P, name: 'a' }],
    },
    param: 'config.strategy.default',
  },
  {
    name: 'conditional then names no target',
    body: {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: {}, then: 'a' },
          { query: {}, then: 'c' },
        ],
        default: 'a',
      },
      targets: [
        { ...P, name: 'a' },
        { ...P, name: 'b' },
      ],
    },
    param: 'config.strategy.conditions[1].then',
  },
  {
    name: 'conditional default names no target',
    body: {
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }], default: 'z' },
      targets: [{ ...P, name: 'a' }],
    },
    param: 'config.strategy.default',
  },
  {
    name: 'conditional query not an object',
    body: {
      strategy: { mode: 'conditional', conditions: [{ query: 'x', then: 'a' }], default: 'a' },
      targets: [{ ...P, name: 'a' }],
    },
    param: 'config.strategy.conditions[0].query',
  },
  {
    name: 'conditional condition without then',
    body: {
      strategy: { mode: 'conditional', conditions: [{ query: {} }], default: 'a' },
      targets: [{ ...P, name: 'a' }],
    },
    param: 'config.strategy.conditions[0].then',
  },
  {
    name: 'conditional duplicate target names',
    body: {
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }], default: 'a' },
      targets: [
        { ...P, name: 'a' },
        { ...P, name: 'a' },
      ],
    },
    param: 'config.targets[1].name',
  },
  {
    name: 'strategy on_status_codes out of range',
    body: { strategy: { mode: 'fallback', on_status_codes: [429, 600] }, targets: [P] },
    param: 'config.strategy.on_status_codes[1]',
  },
  { name: 'cache without mode', body: { cache: { max_age: 60 } }, param: 'config.cache.mode' },
  { name: 'cache mode unknown', body: { cache: { mode: 'lru' } }, param: 'config.cache.mode' },
  {
    name: 'cache max_age negative',
    body: { cache: { mode: 'simple', max_age: -1 } },
    param: 'config.cache.max_age',
  },
  {
    name: 'cache max_age not an integer',
    body: { cache: { mode: 'simple', max_age: 1.5 } },
    param: 'config.cache.max_age',
  },
  {
    name: 'retry without attempts',
    body: { retry: { on_status_codes: [429] } },
    param: 'config.retry.attempts',
  },
  { name: 'retry attempts above 10', body: { retry: { attempts: 11 } }, param: 'config.retry.attempts' },
  { name: 'retry attempts negative', body: { retry: { attempts: -1 } }, param: 'config.retry.attempts' },
  { name: 'retry key misspelt', body: { retry: { attemps: 3 } }, param: 'config.retry.attemps' },
  {
    name: 'retry status code below 100',
    body: { retry: { attempts: 2, on_status_codes: [99] } },
    param: 'config.retry.on_status_codes[0]',
  },
  {
    name: 'retry use_retry_after_headers a string',
    body: { retry: { attempts: 2, use_retry_after_headers: 'yes' } },
    param: 'config.retry.use_retry_after_headers',
  },
  {
    name: 'nested target retry attempts a string',
    body: { strategy: { mode: 'fallback' }, targets: [P, { ...P, retry: { attempts: 'three' } }] },
    param: 'config.targets[1].retry.attempts',
  },
  {
    name: 'deeply nested target without credentials',
    body: {
      strategy: { mode: 'fallback' },
      targets: [P, { strategy: { mode: 'loadbalance' }, targets: [P, { provider: 'anthropic', weight: 1 }] }],
    },
    param: 'config.targets[1].targets[1].api_key',
  },
  {
    name: 'target without any combination',
    body: { strategy: { mode: 'loadbalance' }, targets: [P, { weight: 1 }] },
    param: 'config.targets[1]',
  },
  {
    name: 'target unknown key',
    body: { strategy: { mode: 'fallback' }, targets: [{ ...P, foo: 1 }] },
    param: 'config.targets[0].foo',
  },
  {
    name: 'cb_config threshold below 1',
    body: { ...P, cb_config: { failure_threshold: 0, cooldown_interval: 30000 } },
    param: 'config.cb_config.failure_threshold',
  },
  {
    name: 'cb_config cooldown below 30000',
    body: { ...P, cb_config: { failure_threshold: 3, cooldown_interval: 1000 } },
    param: 'config.cb_config.cooldown_interval',
  },
  {
    name: 'cb_config cooldown above a day',
    body: { ...P, cb_config: { failure_threshold: 3, cooldown_interval: 86_400_001 } },
    param: 'config.cb_config.cooldown_interval',
  },
  {
    name: 'cb_config cooldown beyond what a timer or Redis holds',
    body: { ...P, cb_config: { failure_threshold: 3, cooldown_interval: 1e21 } },
    param: 'config.cb_config.cooldown_interval',
  },
  {
    name: 'cb_config without cooldown',
    body: { ...P, cb_config: { failure_threshold: 3 } },
    param: 'config.cb_config.cooldown_interval',
  },
  {
    name: 'cb_config status code not an integer',
    body: {
      ...P,
      cb_config: { failure_threshold: 3, cooldown_interval: 30000, failure_status_codes: [500.5] },
    },
    param: 'config.cb_config.failure_status_codes[0]',
  },
  { name: 'weight negative', body: { ...P, weight: -1 }, param: 'config.weight' },
  {
    name: 'on_status_codes item a string',
    body: { ...P, on_status_codes: ['429'] },
    param: 'config.on_status_codes[0]',
  },
  {
    name: 'custom_host not a URL',
    body: { provider: 'openai', custom_host: 'localhost:8000' },
    param: 'config.custom_host',
  },
  {
    name: 'custom_host ftp',
    body: { provider: 'openai', custom_host: 'ftp://models.internal' },
    param: 'config.custom_host',
  },
  {
    name: 'custom_host bad port',
    body: { provider: 'openai', custom_host: 'http://models.internal:99999/v1' },
    param: 'config.custom_host',
  },
  {
    name: 'forward_headers not an array',
    body: { ...P, forward_headers: 'x-user' },
    param: 'config.forward_headers',
  },
  {
    name: 'forward_headers item not a header name',
    body: { ...P, forward_headers: ['x user'] },
    param: 'config.forward_headers[0]',
  },
  { name: 'request_timeout zero', body: { ...P, request_timeout: 0 }, param: 'config.request_timeout' },
  {
    name: 'request_timeout not an integer',
    body: { ...P, request_timeout: 1.5 },
    param: 'config.request_timeout',
  },
  {
    name: 'deployments item without alias',
    body: { ...P, deployments: [{ deployment_id: 'd', api_version: 'v' }] },
    param: 'config.deployments[0].alias',
  },
  {
    name: 'deployments item unknown key',
    body: { ...P, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', weight: 1 }] },
    param: 'config.deployments[0].weight',
  },
  {
    name: 'cloudd_deployment_type unknown',
    body: { ...P, cloudd_deployment_type: 'dedicated' },
    param: 'config.cloudd_deployment_type',
  },
  {
    name: 'cloudb_request_type unknown',
    body: { ...P, cloudb_request_type: 'provisioned' },
    param: 'config.cloudb_request_type',
  },
  {
    name: 'cloudb_shared_request_type unknown',
    body: { ...P, cloudb_shared_request_type: 'standard' },
    param: 'config.cloudb_shared_request_type',
  },
  {
    name: 'cloudb_shared_request_type priority with a regional cloudb_region',
    body: { ...V, cloudb_region: 'us-central1', cloudb_shared_request_type: 'priority' },
    param: 'config.cloudb_shared_request_type',
  },
  {
    name: 'cloudb_shared_request_type flex with a multi-regional cloudb_region',
    body: { ...V, cloudb_region: 'eu', cloudb_shared_request_type: 'flex' },
    param: 'config.cloudb_shared_request_type',
  },
  {
    name: 'cloudb_shared_request_type with a regional cloudb_region its target inherits',
    body: {
      ...V,
      cloudb_region: 'europe-west4',
      strategy: { mode: 'fallback' },
      targets: [{ retry: { attempts: 1 }, cloudb_shared_request_type: 'flex' }],
    },
    param: 'config.targets[0].cloudb_shared_request_type',
  },
  {
    name: 'cloudb_shared_request_type with cloudb_request_type dedicated',
    body: { ...V, cloudb_request_type: 'dedicated', cloudb_shared_request_type: 'priority' },
    param: 'config.cloudb_shared_request_type',
  },
  {
    name: 'cloudb_service_account_json a string',
    body: { provider: 'vertex-ai', cloudb_region: 'us-central1', cloudb_service_account_json: '{}' },
    param: 'config.cloudb_service_account_json',
  },
  {
    name: 'vendora_organization a number',
    body: { ...P, vendora_organization: 1 },
    param: 'config.vendora_organization',
  },
  { name: 'override_params an array', body: { ...P, override_params: [] }, param: 'config.override_params' },
  {
    name: 'strict_compat_compliance a string',
    body: { ...P, strict_compat_compliance: 'false' },
    param: 'config.strict_compat_compliance',
  },
  {
    name: 'before hook without id',
    body: { before_request_hooks: [{ type: 'guardrail' }] },
    param: 'config.before_request_hooks[0].id',
  },
  {
    name: 'before hook check without parameters',
    body: { before_request_hooks: [{ id: 'h', checks: [{ id: 'default.contains' }] }] },
    param: 'config.before_request_hooks[0].checks[0].parameters',
  },
  {
    name: 'before hook on_fail deny a string',
    body: { before_request_hooks: [{ id: 'h', on_fail: { deny: 'yes' } }] },
    param: 'config.before_request_hooks[0].on_fail.deny',
  },
  {
    name: 'before hook feedback value a string',
    body: { before_request_hooks: [{ id: 'h', on_fail: { feedback: { value: 'bad' } } }] },
    param: 'config.before_request_hooks[0].on_fail.feedback.value',
  },
  {
    name: 'after hook async a string',
    body: { after_request_hooks: [{ id: 'h', async: 'no' }] },
    param: 'config.after_request_hooks[0].async',
  },
  {
    name: 'after hook on_success deny a string',
    body: { after_request_hooks: [{ id: 'h', on_success: { deny: 'yes' } }] },
    param: 'config.after_request_hooks[0].on_success.deny',
  },
  { name: 'input guardrail a number', body: { input_guardrails: [5] }, param: 'config.input_guardrails[0]' },
  {
    name: 'input guardrail extra key not an object',
    body: { input_guardrails: [{ deny: true, 'default.contains': 'word' }] },
    param: 'config.input_guardrails[0].default.contains',
  },
  {
    name: 'input guardrail on_fail with deny',
    body: { input_guardrails: [{ id: 'g', on_fail: { deny: true } }] },
    param: 'config.input_guardrails[0].on_fail.deny',
  },
  {
    name: 'output guardrail deny a string',
    body: { output_guardrails: [{ id: 'g', deny: 'yes' }] },
    param: 'config.output_guardrails[0].deny',
  },
  {
    name: 'output guardrails not an array',
    body: { output_guardrails: 'g1' },
    param: 'config.output_guardrails',
  },
];
