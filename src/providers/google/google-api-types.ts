/**
 * The Gemini wire shapes (Gemini API `v1beta` and Vertex AI `v1`, which share them), as far as the
 * gateway reads and writes them. Field names are Google's own, camelCase.
 */

export interface GeminiFunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown>;
  /** Vertex/Gemini 3 streamed arguments: each entry sets (or, for strings, extends) one JSON path. */
  partialArgs?: GeminiPartialArg[];
  /** true: more parts of this same call follow. */
  willContinue?: boolean;
}

export interface GeminiPartialArg {
  jsonPath: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: unknown;
  willContinue?: boolean;
}

export interface GeminiPart {
  text?: string;
  /** true when `text` is a thought summary rather than answer text. */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  executableCode?: unknown;
  codeExecutionResult?: unknown;
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts: GeminiPart[];
}

/** The OpenAPI 3.0 subset Gemini accepts in `responseSchema` and function `parameters`. */
export interface GeminiSchema {
  type?: 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT' | 'NULL';
  format?: string;
  title?: string;
  description?: string;
  nullable?: boolean;
  enum?: string[];
  items?: GeminiSchema;
  minItems?: string;
  maxItems?: string;
  properties?: Record<string, GeminiSchema>;
  required?: string[];
  propertyOrdering?: string[];
  minProperties?: string;
  maxProperties?: string;
  minLength?: string;
  maxLength?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: GeminiSchema[];
  default?: unknown;
  example?: unknown;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
}

export interface GeminiToolConfig {
  functionCallingConfig: {
    mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED';
    allowedFunctionNames?: string[];
  };
}

export type GeminiThinkingLevel = 'minimal' | 'low' | 'medium' | 'high';

/** `thinkingBudget` (tokens; Gemini 2.5) and `thinkingLevel` (Gemini 3) are not to be sent together. */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: GeminiThinkingLevel;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  stopSequences?: string[];
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  candidateCount?: number;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiGenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  /** Counts per modality (`TEXT`, `IMAGE`, `AUDIO`, `VIDEO`, `DOCUMENT`). */
  promptTokensDetails?: GeminiModalityCount[];
  /** Counts per modality of `cachedContentTokenCount`, which `promptTokensDetails` count too. */
  cacheTokensDetails?: GeminiModalityCount[];
  candidatesTokensDetails?: GeminiModalityCount[];
  /** Vertex AI only: the quota that served the call, `ON_DEMAND` (pay as you go), `PROVISIONED_THROUGHPUT`,
   * `ON_DEMAND_PRIORITY`, `ON_DEMAND_FLEX`; on every event of a stream, those without counts too. */
  trafficType?: string;
}

export interface GeminiModalityCount {
  modality?: string;
  tokenCount?: number;
}

export interface GeminiCandidate {
  content?: Partial<GeminiContent>;
  finishReason?: string;
  finishMessage?: string;
  /** Absent on Vertex for the first candidate. */
  index?: number;
  safetyRatings?: unknown[];
}

export interface GeminiPromptFeedback {
  blockReason?: string;
  blockReasonMessage?: string;
  safetyRatings?: unknown[];
}

export interface GoogleErrorDetail {
  '@type'?: string;
  retryDelay?: string;
  reason?: string;
  [key: string]: unknown;
}

export interface GoogleErrorObject {
  code?: number;
  message?: string;
  status?: string;
  details?: GoogleErrorDetail[];
}

export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: GeminiPromptFeedback;
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Vertex: RFC 3339 time the response was created. */
  createTime?: string;
  /** An error reported inside a 200 stream. */
  error?: GoogleErrorObject;
}

export interface GeminiBatchEmbedRequest {
  requests: Array<{
    model: string;
    content: { parts: Array<{ text: string }> };
    outputDimensionality?: number;
  }>;
}

export interface GeminiBatchEmbedResponse {
  embeddings?: Array<{ values: number[] }>;
}
