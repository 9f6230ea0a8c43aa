export { toOpenAIBody } from './openai-body.js';
export { parseOpenAIResponse } from './openai-response.js';
export { createOpenAIStreamTranslator } from './openai-stream-translator.js';
export { openAIErrorFromResponse, openAIStreamError } from './openai-error.js';
export { openAIEventFailure } from './openai-stream-failure.js';
export { openAIWireOperation } from './openai-operation.js';
export { openAIAnswerUsage } from './openai-answer-usage.js';
export {
  openAIResponsesOperation,
  responsesUsage,
  ResponsesEventRelay,
} from './openai-responses-operation.js';
