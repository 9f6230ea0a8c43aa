/** The Bedrock Runtime Converse / ConverseStream / InvokeModel wire shapes the adapter uses. */

export type BedrockImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export type BedrockContentBlock =
  | { text: string }
  | { image: { format: BedrockImageFormat; source: { bytes: string } } }
  | { document: { format: 'pdf'; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | {
      toolResult: {
        toolUseId: string;
        content: Array<{ text: string } | { json: unknown } | { image: unknown }>;
        status?: 'success' | 'error';
      };
    }
  | {
      reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string };
    }
  | BedrockCachePoint;

/** A prompt-cache checkpoint: what comes before it is cached, for `ttl` (`5m` by default, or `1h`). */
export interface BedrockCachePoint {
  cachePoint: { type: 'default'; ttl?: string };
}

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockToolSpec {
  toolSpec: {
    name: string;
    description?: string;
    inputSchema: { json: Record<string, unknown> };
    /** Structured-output enforcement of the tool's input. */
    strict?: boolean;
  };
}

export type BedrockToolChoice =
  { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface BedrockToolConfig {
  tools: Array<BedrockToolSpec | BedrockCachePoint>;
  toolChoice?: BedrockToolChoice;
}

export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** The cache writes by how long they are kept (`5m`, `1h`): an hour's cost more. */
  cacheDetails?: Array<{ ttl?: string; inputTokens?: number }>;
}

/** A content block of an answer (one member set). */
export interface BedrockResponseBlock {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  reasoningContent?: {
    reasoningText?: { text: string; signature?: string };
    redactedContent?: string;
  };
  [key: string]: unknown;
}

export interface BedrockConverseResponse {
  output?: { message?: { role: 'assistant'; content: BedrockResponseBlock[] } };
  stopReason?: string;
  usage?: BedrockUsage;
  metrics?: { latencyMs?: number };
}

/** ConverseStream event payloads by `:event-type`. */
export interface BedrockStreamPayloads {
  messageStart: { role: 'assistant' };
  contentBlockStart: {
    contentBlockIndex: number;
    start?: { toolUse?: { toolUseId: string; name: string } };
  };
  contentBlockDelta: {
    contentBlockIndex: number;
    delta: {
      text?: string;
      toolUse?: { input: string };
      reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
    };
  };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason: string; additionalModelResponseFields?: unknown };
  metadata: { usage?: BedrockUsage; metrics?: unknown };
}

/** A chat request's conversation as Converse takes it: the system blocks and the turns. */
export interface BedrockPrompt {
  system: BedrockContentBlock[];
  messages: BedrockMessage[];
}
