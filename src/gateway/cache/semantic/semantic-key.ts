/**
 * What the semantic cache compares by meaning, and what must be equal (docs/cache.md, "The semantic
 * cache"). Only the text of the conversation's last turn — a user message — is embedded. Everything
 * else is hashed into the partition key: an entry can answer only a request of the same partition, so a
 * different workspace, namespace, provider, host, model, embedding model, parameter, system prompt, tool
 * set or earlier turn can never be matched, however close the last question is.
 */
import { createHash } from 'node:crypto';
import { targetPart } from '../../routing/target-settings.js';
import {
  answerHeaders,
  canonicalJson,
  credentialPart,
  forwardedPart,
  IGNORED_BODY_FIELDS,
} from '../cache-key.js';

/** Bumped whenever the partition's makeup changes, so entries stored under an old meaning never match. */
const PARTITION_VERSION = 3;

export interface SemanticRequest {
  /** The text that is embedded. */
  text: string;
  /** The body less the embedded text: hashed into the partition. */
  rest: Record<string, unknown>;
}

/** The text of a message's content when it is text only (a string, or text parts); else undefined. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  const texts: string[] = [];
  for (const part of content as unknown[]) {
    if (typeof part !== 'object' || part === null) return undefined;
    const { type, text } = part as { type?: unknown; text?: unknown };
    // Any other field on a part (cache_control…) goes with the part into the partition instead.
    if (type !== 'text' || typeof text !== 'string' || Object.keys(part).length !== 2) return undefined;
    texts.push(text);
  }
  return texts.join('\n');
}

/**
 * The embedded text and the rest of a request, or undefined when it cannot be compared by meaning
 * (then the simple cache serves it). Chat: the last message must be a user message whose content is
 * text and carries nothing else than role and content; all earlier messages (system prompt included)
 * stay in the partition verbatim. Completions: a single string prompt.
 */
export function semanticRequestOf(
  endpoint: string,
  body: Record<string, unknown>,
): SemanticRequest | undefined {
  if (endpoint === 'chat') {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) return undefined;
    const last = messages[messages.length - 1] as Record<string, unknown>;
    if (typeof last !== 'object' || last === null || last.role !== 'user') return undefined;
    if (Object.keys(last).some((field) => field !== 'role' && field !== 'content')) return undefined;
    const text = textOf(last.content);
    if (text === undefined || text.trim() === '') return undefined;
    return { text, rest: { ...body, messages: messages.slice(0, -1) } };
  }
  if (endpoint === 'completions') {
    const prompt = body.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') return undefined;
    const rest = { ...body };
    delete rest.prompt;
    return { text: prompt, rest };
  }
  return undefined;
}

export interface PartitionInput {
  workspaceId: string;
  namespace: string | null;
  endpoint: string;
  provider: string;
  host: string | null | undefined;
  model: string;
  /** The body less the embedded text (semanticRequestOf). */
  rest: Record<string, unknown>;
  /** Which embedding model made the vectors: vectors of two models are not comparable. */
  embedder: unknown;
  /** Whether the answer keeps to OpenAI's fields only (strict compatibility). */
  strict: boolean;
  /** The client's request headers (lower-case); only those that change the answer are read. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The target's deployment and API version settings, and its credential, hashed (as in the simple key). */
  target?: object | undefined;
  /** The headers the target forwards to the provider (as in the simple key). */
  forwarded?: Readonly<Record<string, string>> | undefined;
}

export function partitionKey(input: PartitionInput): string {
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input.rest)) {
    if (!IGNORED_BODY_FIELDS.has(field)) body[field] = value;
  }
  const material = canonicalJson({
    v: PARTITION_VERSION,
    workspace: input.workspaceId,
    namespace: input.namespace,
    endpoint: input.endpoint,
    provider: input.provider,
    host: input.host ?? null,
    model: input.model,
    stream: input.rest.stream === true,
    strict: input.strict,
    headers: answerHeaders(input.headers),
    forwarded: forwardedPart(input.forwarded),
    target: targetPart(input.target),
    credential: credentialPart(input.target),
    body,
    embedder: input.embedder,
  });
  return createHash('sha256').update(material).digest('hex');
}
