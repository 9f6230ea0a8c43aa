/**
 * A conversation rebuilt from the store: the chain of `previous_response_id` walked back to its first
 * response, each response's input items followed by its output, oldest first. Whatever provider answered
 * each turn, the items are the Responses API's own, so the next turn's provider gets the whole history in
 * its own wire format (to-chat-request.ts). `instructions` are not carried over (the spec says so).
 */
import { GatewayError } from '../../core/errors.js';
import type { Store, StoredResponse, StoredResponseItem } from '../../store/types.js';
import type { ConversationItem } from './response-types.js';

/** A chain longer than this is refused rather than walked. */
const MAX_TURNS = 1000;

export async function loadConversation(
  store: Store,
  workspaceId: string,
  previousResponseId: string,
): Promise<ConversationItem[]> {
  const turns: ConversationItem[][] = [];
  let id: string | null = previousResponseId;
  while (id !== null) {
    if (turns.length === MAX_TURNS) {
      throw new GatewayError('invalid_body', `The conversation is longer than ${MAX_TURNS} responses`, {
        param: 'previous_response_id',
      });
    }
    const [response, inputItems]: [StoredResponse | undefined, StoredResponseItem[] | undefined] =
      await Promise.all([store.getResponse(workspaceId, id), store.getResponseInputItems(workspaceId, id)]);
    if (!response || !inputItems) {
      throw new GatewayError('not_found', `No response ${id} in this workspace`, {
        param: 'previous_response_id',
      });
    }
    const output = (response.body.output ?? []) as ConversationItem[];
    turns.push([...inputItems.map((stored) => stored.item as ConversationItem), ...output]);
    id = response.previous_response_id;
  }
  return turns.reverse().flat();
}
