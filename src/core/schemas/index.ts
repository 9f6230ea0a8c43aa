export {
  ChatCompletionRequestSchema,
  validateChatCompletionRequest,
  type ChatCompletionRequest,
} from './chat-completion-request.js';
export {
  CompletionRequestSchema,
  validateCompletionRequest,
  type CompletionRequest,
} from './completion-request.js';
export {
  EmbeddingRequestSchema,
  validateEmbeddingRequest,
  type EmbeddingRequest,
} from './embedding-request.js';
export type {
  ChatMessage,
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  FunctionMessage,
  TextPart,
  UserContentPart,
  AssistantContentPart,
} from './chat-messages.js';
export type { Tool, ToolChoice, ResponseFormat, ThinkingOption } from './chat-tools.js';
export {
  PromptCompletionRequestSchema,
  validatePromptCompletionRequest,
  type PromptCompletionRequest,
} from './prompt-completion-request.js';
export {
  MessagesRequestSchema,
  MessagesCountTokensRequestSchema,
  validateMessagesRequest,
  validateMessagesCountTokensRequest,
  type MessagesRequest,
  type MessagesCountTokensRequest,
  type MessagesMessage,
  type MessagesContentBlock,
  type MessagesTool,
} from './messages-request.js';
