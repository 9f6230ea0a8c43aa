import { describe, expect, it } from 'vitest';
import { geminiAnswerUsage } from '../../../src/providers/google/convert-google-usage.js';

const usageMetadata = { promptTokenCount: 9, candidatesTokenCount: 28, totalTokenCount: 37 };

describe("a Gemini answer's grounding", () => {
  it('is counted as one grounded prompt and its search queries, which Google bills', () => {
    const grounded = geminiAnswerUsage({
      candidates: [{ groundingMetadata: { webSearchQueries: ['a', 'b', 'c'] } }],
      usageMetadata,
    });
    expect(grounded).toMatchObject({ server_tool_use: { web_search_requests: 3, grounded_prompts: 1 } });
    const plain = geminiAnswerUsage({ candidates: [{ groundingMetadata: {} }], usageMetadata });
    expect(plain).not.toHaveProperty('server_tool_use');
  });
});
