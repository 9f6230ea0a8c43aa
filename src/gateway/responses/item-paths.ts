/**
 * An error about one input item names it as OpenAI's Responses API does: by its path in the client's
 * request (`input[2].content[0].image_url`), in `param` and in the message. Within the pipeline an item is
 * named by its index in the input the pipeline carries — the conversation of `previous_response_id`, then
 * the client's own items (response-call.ts) —; the translation names the items a chat message came from
 * (to-chat-request.ts: `MessageOrigin`), a native target's index is the one of the items it was sent
 * (steps/responses-step.ts leaves some reasoning out). The client's index is the pipeline's less the
 * offset of the client's first item; an item of the stored conversation is the client's only through
 * `previous_response_id`, which names it.
 */

/** Where one chat message of a translated request came from. */
export type MessageOrigin =
  | { kind: 'instructions' }
  /** A user message: its content parts are the item's, one for one. */
  | { kind: 'user'; item: number }
  /** A system or developer message, its parts' text joined; or a tool message, its content the output. */
  | { kind: 'joined' | 'tool'; item: number }
  /** An assistant turn: the items of its text parts, thinking blocks and tool calls, in their order. */
  | {
      kind: 'assistant';
      item: number;
      /** Per content part: its item, and the part's index there (none for a string content). */
      parts: Array<{ item: number; part?: number }>;
      blocks: number[];
      calls: number[];
    };

const INPUT_ITEM = /^input\[(\d+)\](.*)$/s;
const CHAT_MESSAGE = /^messages\[(\d+)\](.*)$/s;
const INDEXED = /^\.(\w+)\[(\d+)\](.*)$/s;

/**
 * The path of the item a chat request's field was made from (`input[k]…`, by the pipeline's index), or
 * `instructions`; undefined when the field is no one message's (`messages` itself).
 */
export function itemPathOfChatParam(
  chatParam: string,
  origins: readonly MessageOrigin[],
): string | undefined {
  const message = CHAT_MESSAGE.exec(chatParam);
  if (message === null) return undefined;
  const origin = origins[Number(message[1])];
  if (origin === undefined) return undefined;
  if (origin.kind === 'instructions') return 'instructions';
  const rest = message[2]!;
  const at = (item: number, path = '') => `input[${item}]${path}`;
  const indexed = INDEXED.exec(rest);
  switch (origin.kind) {
    case 'user':
      if (indexed?.[1] === 'content')
        return at(origin.item, `.content[${indexed[2]}]${partField(indexed[3]!)}`);
      return at(
        origin.item,
        rest.startsWith('.content') ? '.content' : rest.startsWith('.role') ? '.role' : '',
      );
    case 'joined':
      return at(origin.item, rest.startsWith('.content') ? '.content' : '');
    case 'tool':
      if (indexed?.[1] === 'content') return at(origin.item, `.output[${indexed[2]}]${indexed[3]}`);
      if (rest.startsWith('.content')) return at(origin.item, '.output');
      return at(origin.item, rest.startsWith('.tool_call_id') ? '.call_id' : '');
    case 'assistant': {
      const index = Number(indexed?.[2]);
      if (indexed?.[1] === 'content' && origin.parts[index]) {
        const { item, part } = origin.parts[index];
        return at(item, part === undefined ? '.content' : `.content[${part}]${indexed[3]}`);
      }
      if (indexed?.[1] === 'tool_calls' && origin.calls[index] !== undefined) {
        return at(origin.calls[index], callField(indexed[3]!));
      }
      if (indexed?.[1] === 'content_blocks' && origin.blocks[index] !== undefined) {
        return at(origin.blocks[index]);
      }
      return at(origin.item);
    }
  }
}

/** A chat content part's field as the input part's: an image's `image_url.url` is its `image_url`, a file's
 * `file.file_url` its `file_url`. */
function partField(rest: string): string {
  if (rest.startsWith('.image_url.detail')) return '.detail';
  if (rest.startsWith('.image_url')) return '.image_url';
  const file = /^\.file\.(\w+)/.exec(rest);
  if (file) return `.${file[1]}`;
  if (rest.startsWith('.file')) return '';
  return rest;
}

function callField(rest: string): string {
  if (rest.startsWith('.id')) return '.call_id';
  const field = /^\.function\.(name|arguments)/.exec(rest);
  return field ? `.${field[1]}` : '';
}

/** A native target's `input[n]…` as the pipeline's: `sent` holds the pipeline's index of each item sent. */
export function sentItemPath(param: string, sent: readonly number[] | undefined): string {
  const item = INPUT_ITEM.exec(param);
  if (item === null || sent === undefined) return param;
  const index = sent[Number(item[1])];
  return index === undefined ? param : `input[${index}]${item[2]}`;
}

/** How an error names a field: `param`, and the words its message says it in. */
export interface FieldTerms {
  param: string;
  text: string;
}

/**
 * The pipeline's `input[k]…` as the client named it: `input[k - offset]…`, or, for an item of the stored
 * conversation, `previous_response_id` (its message says which item). `offset` is the pipeline's index of
 * the client's first item (negative when `truncation: auto` left out some of them); when unknown, the
 * input as a whole is named.
 */
export function clientTerms(path: string, offset: number | null): FieldTerms {
  const item = INPUT_ITEM.exec(path);
  if (item === null) return { param: path, text: path };
  if (offset === null) return { param: 'input', text: path };
  const index = Number(item[1]) - offset;
  const rest = item[2]!;
  if (index >= 0) {
    const own = `input[${index}]${rest}`;
    return { param: own, text: own };
  }
  const field = rest === '' ? '' : `${rest.replace(/^\./, '')} of `;
  return {
    param: 'previous_response_id',
    text: `${field}item ${item[1]} of the conversation of previous_response_id`,
  };
}
