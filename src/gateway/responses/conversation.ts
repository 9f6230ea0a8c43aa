/**
 * A conversation rebuilt from the store: the chain of `previous_response_id` walked back to its first
 * response, each response's input items followed by its output, oldest first. Whatever provider answered
 * each turn, the items are the Responses API's own, so the next turn's provider gets the whole history in
 * its own wire format (to-chat-request.ts). `instructions` are not carried over (the spec says so). A
 * response still queued or in progress cannot be continued yet.
 */
import { GatewayError } from '../../core/errors.js';
import type { Store } from '../../store/types.js';
import type { ConversationItem } from './response-types.js';

const NOT_ENDED: ReadonlySet<string> = new Set(['queued', 'in_progress']);

/** A chain longer than this is refused rather than sent. */
export const MAX_TURNS = 1000;

export async function loadConversation(
  store: Store,
  workspaceId: string,
  previousResponseId: string,
): Promise<ConversationItem[]> {
  const { responses, missing } = await store.getResponseChain(workspaceId, previousResponseId, MAX_TURNS);
  if (missing !== undefined && responses.length === MAX_TURNS) {
    throw new GatewayError('invalid_body', `The conversation is longer than ${MAX_TURNS} responses`, {
      param: 'previous_response_id',
    });
  }
  if (missing !== undefined) {
    const where = missing === previousResponseId ? '' : ` (named by a response of the conversation)`;
    throw new GatewayError('not_found', `No response ${missing} in this workspace${where}`, {
      param: 'previous_response_id',
    });
  }
  // A response still being answered (or, in the background, waiting to be) has no output yet: the next
  // turn would go without its answer.
  const running = responses.find((response) => NOT_ENDED.has(response.body.status as string));
  if (running !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `Response ${running.id} is ${running.body.status as string}: a conversation continues from a response once it has ended`,
      { param: 'previous_response_id' },
    );
  }
  return responses.flatMap((response) => [
    ...response.input_items.map((stored) => stored.item as ConversationItem),
    ...((response.body.output ?? []) as ConversationItem[]),
  ]);
}
