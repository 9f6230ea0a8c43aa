import { randomBytes } from 'node:crypto';
import type { GeminiGenerateContentResponse } from './google-api-types.js';

/** Gemini gives function calls no id (or one OpenAI clients would not expect); the gateway makes one. */
export function generateToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export function completionId(response: GeminiGenerateContentResponse): string {
  return `chatcmpl-${response.responseId ?? randomBytes(12).toString('hex')}`;
}

/** Vertex stamps `createTime`; otherwise the time the answer was read. Unix seconds. */
export function createdAt(response: GeminiGenerateContentResponse, now = Date.now()): number {
  const stamped = response.createTime ? Date.parse(response.createTime) : Number.NaN;
  return Math.floor((Number.isNaN(stamped) ? now : stamped) / 1000);
}
