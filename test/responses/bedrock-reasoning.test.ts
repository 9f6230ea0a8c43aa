/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// reasoning.effort on a Bedrock model that takes no thinking field (DeepSeek R1 reasons unasked): the
// Responses API answers it, its reasoning as a reasoning item, as the Messages API does.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBedrockJsonFixture } from '../fakes/bedrock/fixtures.js';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

let gateway: TestGateway;
let bedrock: FakeBedrock;

beforeAll(async () => {
  [gateway, bedrock] = await Promise.all([startGateway(), startFakeBedrock()]);
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

function sdk(): OpenAI {
  const config = {
    provider: 'bedrock',
    cloudc_region: 'us-east-1',
    cloudc_access_key_id: 'AKIDFAKEBEDROCK',
    cloudc_secret_access_key: 'fake-secret-key',
    custom_host: bedrock.url,
  };
  return gatewayOpenAI(gateway, config);
}

describe('reasoning.effort on a Bedrock model without a thinking field', () => {
  it('is answered, with the reasoning it gives as a reasoning item', async () => {
    const recorded = readBedrockJsonFixture('amazon-bedrock-reasoning.json') as any;
    const [reasoning, text] = recorded.output.message.content;
    bedrock.enqueue({ kind: 'json', fixture: 'amazon-bedrock-reasoning.json' });
    const response = await sdk().responses.create({
      model: 'us.deepseek.r1-v1:0',
      input: 'How many r are in strawberry?',
      reasoning: { effort: 'high' },
    });
    expectOpenAPIValid('Response', response);
    expect(response.status).toBe('completed');
    // Sent without Anthropic's thinking field, which Bedrock refuses for this model.
    expect(bedrock.requests.at(-1)!.body.additionalModelRequestFields).toBeUndefined();
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(JSON.stringify(response.output[0])).toContain(
      JSON.stringify(reasoning.reasoningContent.reasoningText.text).slice(1, 40),
    );
    expect(response.output_text).toBe(text.text);
  });
});
