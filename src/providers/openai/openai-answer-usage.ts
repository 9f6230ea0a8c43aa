import {
  firstUsage,
  isCount,
  openAIChatUsage,
  usageObject,
  type AnswerUsageReader,
} from '../shared/answer-usage.js';
import { responsesUsage } from './openai-responses-operation.js';

/** A Response object (`input_tokens`, `output_tokens`). */
const responsesAnswerUsage: AnswerUsageReader = (answer) => {
  const usage = usageObject(answer);
  return usage && isCount(usage.input_tokens) && isCount(usage.output_tokens)
    ? responsesUsage(answer)
    : undefined;
};

/** The usage of an answer of OpenAI's API or one shaped like it: chat, completions, embeddings, Responses. */
export const openAIAnswerUsage: AnswerUsageReader = firstUsage(openAIChatUsage, responsesAnswerUsage);
