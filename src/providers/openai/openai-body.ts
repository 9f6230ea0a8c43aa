import { GatewayError } from '../../core/errors.js';
import type { ChatMessage } from '../../core/schemas/index.js';
import { carriesReturnedThinking, withoutReturnedThinking } from '../shared/returned-content-blocks.js';
import type { AdapterRequest } from '../types.js';

/** Fields of the gateway's own that OpenAI-wire providers do not know. */
const GATEWAY_ONLY_FIELDS = ['thinking'] as const;

export interface OpenAIBodyOptions {
  /** Takes the gateway's `thinking` option as it is. */
  acceptsThinking?: boolean;
  /** Knows only `max_tokens` as a chat answer's limit (Mistral refuses `max_completion_tokens` with a 422,
   * others ignore it): the limit goes under that name, `max_completion_tokens` winning as on every adapter. */
  maxTokensOnly?: boolean;
  /** OpenAI fields the provider refuses rather than ignores, left out of the body. */
  omit?: readonly string[];
  /** OpenAI fields the provider knows by another name (Mistral's `random_seed` for `seed`), sent under it. */
  renames?: Readonly<Record<string, string>>;
}

/**
 * The upstream body for OpenAI-wire providers: the client's body as it is (after override_params), less
 * the gateway's own fields (`thinking`, a message's `content_blocks`) and those the provider refuses, and
 * fields it names otherwise renamed. The reasoning option is sent only to providers
 * that take it.
 */
export function toOpenAIBody(req: AdapterRequest, options: OpenAIBodyOptions = NO_OPTIONS): string {
  const body = req.body;
  if (req.endpoint === 'chat') refuseFileUrls(req.body.messages);
  const dropsThinking = options.acceptsThinking !== true && someIn(GATEWAY_ONLY_FIELDS, body);
  const omits = options.omit !== undefined && someIn(options.omit, body);
  const renameLimit =
    options.maxTokensOnly === true &&
    req.endpoint === 'chat' &&
    (body as { max_completion_tokens?: unknown }).max_completion_tokens != null;
  const renames = options.renames;
  let renamesAny = false;
  if (renames !== undefined) {
    for (const field in renames) {
      if (field in body) {
        renamesAny = true;
        break;
      }
    }
  }
  const messages = req.endpoint === 'chat' ? req.body.messages : undefined;
  const blocksSentBack = Array.isArray(messages) && messages.some(carriesReturnedThinking);
  // Most bodies go as they came: decided above without an array or a closure, as this runs for every call.
  if (!dropsThinking && !omits && !renameLimit && !renamesAny && !blocksSentBack) {
    return JSON.stringify(body);
  }
  const copy: Record<string, unknown> = { ...body };
  if (blocksSentBack) {
    copy.messages = messages.map((message) =>
      carriesReturnedThinking(message) ? withoutReturnedThinking(message) : message,
    );
  }
  if (dropsThinking) for (const field of GATEWAY_ONLY_FIELDS) delete copy[field];
  if (omits) for (const field of options.omit!) delete copy[field];
  if (renamesAny) {
    for (const field in renames) {
      if (!(field in body)) continue;
      copy[renames[field]!] = copy[field];
      delete copy[field];
    }
  }
  if (renameLimit) {
    copy.max_tokens = copy.max_completion_tokens;
    delete copy.max_completion_tokens;
  }
  return JSON.stringify(copy);
}

const NO_OPTIONS: OpenAIBodyOptions = {};

/** Whether the body holds any of the fields. */
function someIn(fields: readonly string[], body: object): boolean {
  for (let i = 0; i < fields.length; i++) if (fields[i]! in body) return true;
  return false;
}

/**
 * A file part by URL (the gateway's `file.file_url`) has no place in OpenAI's chat API, which takes a file
 * inline or by id, and the gateway fetches no URL for the provider (it could reach the gateway's own
 * network): refused, named, rather than sent as a part the provider would read as empty.
 */
function refuseFileUrls(messages: readonly ChatMessage[] | undefined): void {
  if (!Array.isArray(messages)) return;
  // Plain loops: every chat request to an OpenAI-wire provider passes here.
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'user' || !Array.isArray(message.content)) continue;
    for (let j = 0; j < message.content.length; j++) {
      const part = message.content[j]!;
      if (part.type !== 'file' || part.file?.file_url === undefined) continue;
      const param = `messages[${i}].content[${j}].file.file_url`;
      throw new GatewayError(
        'unsupported_parameter',
        `${param}: a file_url cannot be sent to this provider, whose chat API takes a file inline (file_data) or by file_id`,
        { param },
      );
    }
  }
}
