/**
 * The Responses API's stream events as a provider that has the API natively sends them (`response.created`,
 * `response.output_item.added`, `response.output_text.delta`, … `response.completed`): relayed through the
 * pipeline as they came, then renumbered and given the gateway's ids by the Responses ingress
 * (gateway/responses/response-assembler.ts). Field names are OpenAI's.
 */

/** One event of a native Responses stream; its `type` is also the SSE `event:` name. */
export interface ResponsesStreamEvent {
  type: `response.${string}`;
  sequence_number?: number;
  /** The Response as it stands (`response.created`, `…in_progress`, `…completed`, `…incomplete`). */
  response?: unknown;
  /** The output item (`response.output_item.added` / `.done`). */
  item?: unknown;
  item_id?: unknown;
  output_index?: unknown;
  /** A delta's text (`response.output_text.delta` …). */
  delta?: unknown;
}

/** Whether a chunk of the pipeline is a native Responses stream event. */
export function isResponsesStreamEvent(chunk: object): chunk is ResponsesStreamEvent {
  const type = (chunk as { type?: unknown }).type;
  return !('object' in chunk) && typeof type === 'string' && type.startsWith('response.');
}
