import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { responsesUsage } from '../../src/providers/openai/openai-responses-operation.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';

describe("a Response's usage", () => {
  it('counts its web_search_call items as the web searches OpenAI bills per call', () => {
    const file = path.join(providerFixturesDir('openai'), 'responses/openai-web-search-tool.1.json');
    const usage = responsesUsage(JSON.parse(readFileSync(file, 'utf8')));
    expect(usage).toMatchObject({ prompt_tokens: 19681, server_tool_use: { web_search_requests: 3 } });
    expect(responsesUsage({ output: [], usage: { input_tokens: 1, output_tokens: 1 } })).not.toHaveProperty(
      'server_tool_use',
    );
  });
});
