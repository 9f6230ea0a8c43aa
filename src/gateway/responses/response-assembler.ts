/**
 * Turns the canonical chat answer into a Response: a whole chat completion into the Response object, or
 * chat chunks, as they arrive, into the Responses event grammar (`response.created`, `…in_progress`,
 * `output_item.added/done`, `content_part.added/done` (around a message's text or refusal and a reasoning
 * item's text), `output_text.delta/done`, `function_call_arguments.delta/done`, `reasoning_text.delta/done`
 * (and `reasoning_summary_part.added/done`, `reasoning_summary_text.delta/done` when a summary was asked),
 * then exactly one of
 * `response.completed`, `response.incomplete` or `response.failed`), numbered by `sequence_number`.
 *
 * A provider that answered natively (OpenAI, Azure OpenAI) sent a Response or its events already: its
 * output items are kept as they are but for their ids, which become the gateway's (one namespace for every
 * provider's items; a reasoning item's id also names the account that produced it: reasoning-accounts.ts),
 * and its events are relayed with the gateway's ids, response and numbering; its own `response.created`,
 * `…in_progress` and terminal event are replaced by the gateway's.
 *
 * The hooks' `hook_results`, which the first chunk of a stream carries (hooks/hooked-stream.ts), go into
 * the first event, `response.created`, beside its `response`, as a chat stream has them in its first chunk
 * and a Messages stream in its `message_start`.
 *
 * Pure: the sink stores what `finish()` / `fail()` return, the codec sends their events.
 */
import { FailedResponseError, ProviderError, type GatewayError } from '../../core/errors.js';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, Usage } from '../../core/openai-types.js';
import { reasoningText } from '../../core/reasoning-text.js';
import type { ResponsesStreamEvent } from '../../core/responses-types.js';
import { reasoningItemId } from './reasoning-accounts.js';
import { newItemId, newItemIdLike } from './response-ids.js';
import type {
  FunctionCallOutputItem,
  OutputItem,
  OutputMessageItem,
  ReasoningOutputItem,
  ResponseEvent,
  ResponseObject,
  ResponseUsage,
} from './response-types.js';

export interface Settled {
  /** The events that close the stream (the open items' `done` events and the terminal event). */
  events: ResponseEvent[];
  response: ResponseObject;
}

/** A provider's own Response object (a native answer), as far as the gateway reads it. */
export interface NativeResponse {
  object: 'response';
  status?: string;
  model?: string;
  output?: Array<Record<string, unknown>>;
  incomplete_details?: { reason?: string } | null;
  service_tier?: string | null;
  usage?: {
    input_tokens?: number;
    input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
    output_tokens?: number;
    output_tokens_details?: { reasoning_tokens?: number } | null;
    total_tokens?: number;
  } | null;
}

export function isNativeResponse(body: unknown): body is NativeResponse {
  return (body as { object?: unknown } | null)?.object === 'response';
}

/** How a native answer ended: its status, why it is incomplete, its usage. */
interface NativeEnd {
  incomplete: ResponseObject['incomplete_details'];
  usage: ResponseUsage | undefined;
}

type Open =
  | { kind: 'message'; item: OutputMessageItem; index: number; text: string }
  /** A message whose one part is the model's refusal. */
  | { kind: 'refusal'; item: OutputMessageItem; index: number; text: string }
  /**
   * The function calls of one run of tool-call deltas, by their chat index. A chat stream tells each call's
   * deltas by its index, and may send one call's arguments after another call began: a call stays open until
   * its arguments are whole JSON when the next begins, or else until something else comes or the answer
   * ends. `last` is the call whose delta came last, the one a cut or a failure leaves incomplete.
   */
  | { kind: 'function_calls'; calls: Map<number, OpenCall>; last: OpenCall }
  /**
   * `block`: the index among the chat delta's `content_blocks` of the thinking it holds (a provider's
   * thinking blocks are each an item, each with its own signature); absent for reasoning in a field of its
   * own (DeepSeek's reasoning_content …), which is one run.
   */
  | { kind: 'reasoning'; item: ReasoningOutputItem; index: number; text: string; block?: number };

/** A function call being written: its item and its index in `output`. */
interface OpenCall {
  item: FunctionCallOutputItem;
  index: number;
}

export class ResponseAssembler {
  private sequence = 0;
  private started = false;
  private open: Open | undefined;
  private readonly output: OutputItem[] = [];
  private finishReason: FinishReason | null = null;
  private usage: Usage | undefined;
  private model: string | undefined;
  /** The tier the provider says it served the response in, when it says. */
  private serviceTier: string | undefined;
  private settled: Settled | undefined;
  /** The chat stream's tool indexes shown as function calls, and those past `max_tool_calls`, ignored. */
  private readonly toolIndexes = new Set<number>();
  private readonly ignoredToolIndexes = new Set<number>();
  /** A native answer's item ids, the provider's → the gateway's. */
  private readonly ids = new Map<string, string>();
  private nativeEnd: NativeEnd | undefined;

  /**
   * `shell` is the response as created: its id, the request's settings, no output yet. `nativeAccount`
   * tells the tag of the provider account answering natively (reasoning-accounts.ts), if known: its
   * reasoning items get ids that carry it.
   */
  constructor(
    private readonly shell: ResponseObject,
    private readonly nativeAccount: () => string | null = () => null,
  ) {}

  /** The response as it stands, before it has ended (what is stored when the call begins). */
  inProgress(): ResponseObject {
    return { ...this.shell, status: 'in_progress', output: [...this.output] };
  }

  /** A whole chat completion as the Response object. */
  fromCompletion(completion: ChatCompletion): ResponseObject {
    const choice = completion.choices[0];
    this.model = completion.model;
    this.usage = completion.usage;
    this.noteServiceTier(completion.service_tier);
    this.finishReason = choice?.finish_reason ?? null;
    const message = choice?.message;
    // An OpenAI-wire provider's reasoning in a field of its own (DeepSeek's reasoning_content …).
    const reasoning = message?.content_blocks ? undefined : reasoningText(message);
    if (reasoning) this.output.push(this.reasoningItem(reasoning, null));
    for (const block of message?.content_blocks ?? []) {
      if (block.type === 'thinking') {
        this.output.push(this.reasoningItem(block.thinking ?? '', block.signature ?? null));
      } else if (block.type === 'redacted_thinking' && block.data) {
        this.output.push(redactedReasoningItem(block.data));
      }
    }
    if (message?.content) {
      this.output.push({
        type: 'message',
        id: newItemId('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: message.content, annotations: [], logprobs: [] }],
      });
    }
    if (message?.refusal) {
      this.output.push({
        type: 'message',
        id: newItemId('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'refusal', refusal: message.refusal }],
      });
    }
    for (const call of (message?.tool_calls ?? []).slice(0, this.maxToolCalls())) {
      this.output.push({
        type: 'function_call',
        id: newItemId('fc'),
        call_id: call.id,
        name: call.function.name,
        arguments: call.function.arguments || NO_ARGUMENTS,
        status: 'completed',
      });
    }
    // The token limit (or the content filter) cut the last item, as a stream's the item it has open.
    const last = this.output.at(-1);
    if (last && this.cutShort()) last.status = 'incomplete';
    return this.finish().response;
  }

  /** The events one chat chunk makes. */
  push(chunk: ChatCompletionChunk): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    this.start(events, hookResultsOf(chunk));
    this.model ??= chunk.model;
    this.noteServiceTier(chunk.service_tier);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return events;
    const { delta } = choice;
    for (const { index: blockIndex, delta: block } of delta.content_blocks ?? []) {
      if (block.type === 'redacted_thinking' && block.data) {
        // Whole in one delta: an item of its own, added and done at once.
        events.push(...this.closeOpen());
        const item = redactedReasoningItem(block.data);
        const index = this.add(item, events);
        events.push(
          this.event('response.output_item.done', { output_index: index, item: structuredClone(item) }),
        );
        continue;
      }
      if (block.type !== 'thinking') continue;
      const open = this.thinking(events, block.thinking, blockIndex);
      if (block.signature) open.item.encrypted_content = block.signature;
    }
    // An OpenAI-wire provider's reasoning in a field of its own (DeepSeek's reasoning_content …).
    const reasoning = delta.content_blocks ? undefined : reasoningText(delta);
    if (reasoning) this.thinking(events, reasoning);
    if (delta.content) {
      const open = this.openMessage(events, 'message');
      open.text += delta.content;
      events.push(
        this.event('response.output_text.delta', {
          item_id: open.item.id,
          output_index: open.index,
          content_index: 0,
          delta: delta.content,
          logprobs: [],
        }),
      );
    }
    if (delta.refusal) {
      const open = this.openMessage(events, 'refusal');
      open.text += delta.refusal;
      events.push(
        this.event('response.refusal.delta', {
          item_id: open.item.id,
          output_index: open.index,
          content_index: 0,
          delta: delta.refusal,
        }),
      );
    }
    for (const call of delta.tool_calls ?? []) {
      if (!this.takesToolCall(call.index)) continue;
      const open = this.openFunctionCall(events, call.index, call.id, call.function?.name);
      const args = call.function?.arguments;
      if (args) {
        open.item.arguments += args;
        events.push(
          this.event('response.function_call_arguments.delta', {
            item_id: open.item.id,
            output_index: open.index,
            delta: args,
          }),
        );
      }
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  /** A delta of the provider's thinking, into the reasoning item of its block (`block`), opened or continued. */
  private thinking(
    events: ResponseEvent[],
    text: string | undefined,
    block?: number,
  ): Extract<Open, { kind: 'reasoning' }> {
    const open = this.openReasoning(events, block);
    if (!text) return open;
    open.text += text;
    const at = { item_id: open.item.id, output_index: open.index };
    events.push(this.event('response.reasoning_text.delta', { ...at, content_index: 0, delta: text }));
    if (this.summarises()) {
      events.push(
        this.event('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: text }),
      );
    }
    return open;
  }

  /** A provider's own Response (a native JSON answer) as the gateway's. */
  fromNative(upstream: NativeResponse): ResponseObject {
    if (typeof upstream.model === 'string') this.model = upstream.model;
    this.noteServiceTier(upstream.service_tier);
    for (const item of upstream.output ?? []) this.output.push(this.ownItem(item));
    this.noteNativeEnd(upstream);
    return this.finish().response;
  }

  /** The events one event of a native stream makes: itself, with the gateway's ids and numbering. */
  pushNative(event: ResponsesStreamEvent): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    const upstream = event.response as NativeResponse | undefined;
    if (typeof upstream?.model === 'string') this.model ??= upstream.model;
    this.noteServiceTier(upstream?.service_tier);
    this.start(events, hookResultsOf(event));
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        return events;
      case 'response.completed':
      case 'response.incomplete':
        // The terminal event is the gateway's own (finish()), sent once the response is stored.
        if (upstream) this.noteNativeEnd(upstream);
        return events;
    }
    // The hooks' results went into the gateway's response.created: they are not repeated.
    const {
      type,
      sequence_number: _sequence,
      hook_results: _results,
      ...fields
    } = event as ResponsesStreamEvent & { hook_results?: unknown };
    const out: Record<string, unknown> = { ...fields };
    if (typeof out.item_id === 'string') out.item_id = this.ownId(out.item_id);
    if (typeof out.item === 'object' && out.item !== null) {
      const item = this.ownItem(out.item as Record<string, unknown>);
      out.item = item;
      if (typeof out.output_index === 'number') this.output[out.output_index] = structuredClone(item);
    }
    if (type === 'response.function_call_arguments.done' && out.name === undefined) {
      // OpenAI and Azure leave out the call's name, which the event's schema requires: it is the item's.
      const item = typeof out.output_index === 'number' ? this.output[out.output_index] : undefined;
      if (item?.type === 'function_call') out.name = item.name;
    }
    this.applyNative(type, out);
    events.push(this.event(type, out));
    return events;
  }

  /**
   * What a native event adds to its item while it is open (a part, a delta), so that the response a
   * broken stream ends with holds what the client was sent; the item's `done` event then replaces it whole.
   */
  private applyNative(type: string, event: Record<string, unknown>): void {
    const item = typeof event.output_index === 'number' ? this.output[event.output_index] : undefined;
    if (!item) return;
    const fields = item as unknown as Record<string, unknown>;
    const partsOf = (key: 'content' | 'summary'): Array<Record<string, unknown>> => {
      if (!Array.isArray(fields[key])) fields[key] = [];
      return fields[key] as Array<Record<string, unknown>>;
    };
    const append = (target: Record<string, unknown> | undefined, key: string): void => {
      if (target && typeof event.delta === 'string') target[key] = String(target[key] ?? '') + event.delta;
    };
    const content = event.content_index as number;
    const summary = event.summary_index as number;
    switch (type) {
      case 'response.content_part.added':
        partsOf('content')[content] = structuredClone(event.part) as Record<string, unknown>;
        break;
      case 'response.reasoning_summary_part.added':
        partsOf('summary')[summary] = structuredClone(event.part) as Record<string, unknown>;
        break;
      case 'response.output_text.delta':
      case 'response.reasoning_text.delta':
        append(partsOf('content')[content], 'text');
        break;
      case 'response.refusal.delta':
        append(partsOf('content')[content], 'refusal');
        break;
      case 'response.reasoning_summary_text.delta':
        append(partsOf('summary')[summary], 'text');
        break;
      case 'response.function_call_arguments.delta':
        append(fields, 'arguments');
        break;
    }
  }

  /** The end of a complete answer: idempotent, so the sink (to store it) and the codec (to send it) agree. */
  finish(): Settled {
    if (this.settled) return this.settled;
    // A stream that had no chunk at all still opens before it ends (a JSON answer sends no events).
    const events: ResponseEvent[] = [];
    this.start(events, undefined);
    events.push(...this.closeOpen());
    const incomplete = this.nativeEnd
      ? this.nativeEnd.incomplete?.reason
      : this.finishReason === 'length'
        ? ('max_output_tokens' as const)
        : this.finishReason === 'content_filter'
          ? ('content_filter' as const)
          : undefined;
    const response: ResponseObject = {
      ...this.shell,
      model: this.model ?? this.shell.model,
      service_tier: this.serviceTier ?? this.shell.service_tier,
      status: incomplete ? 'incomplete' : 'completed',
      completed_at: incomplete ? null : Math.floor(Date.now() / 1000),
      incomplete_details: incomplete ? { reason: incomplete } : null,
      output: [...this.output],
      usage: this.nativeEnd ? this.nativeEnd.usage : responseUsage(this.usage),
    };
    events.push(this.event(incomplete ? 'response.incomplete' : 'response.completed', { response }));
    this.settled = { events, response };
    return this.settled;
  }

  /** The end of a failed answer; idempotent like `finish`. */
  fail(error: GatewayError | ProviderError): Settled {
    if (this.settled) return this.settled;
    // The item the failure cut short is incomplete; a native stream's, with what it had.
    const events = this.started ? [...this.closeOpen('incomplete'), ...this.closeNative()] : [];
    // A provider's error (an `error` event, native or translated) goes out as OpenAI sends it, before the
    // Response fails: the SDKs throw on it with the provider's code, which response.failed may not keep.
    if (error instanceof ProviderError && !(error instanceof FailedResponseError)) {
      events.push(this.errorEvent(error));
    }
    const response: ResponseObject = {
      ...this.shell,
      model: this.model ?? this.shell.model,
      service_tier: this.serviceTier ?? this.shell.service_tier,
      status: 'failed',
      error: { code: failureCode(error), message: error.message },
      output: [...this.output],
      usage: responseUsage(this.usage),
    };
    events.push(this.event('response.failed', { response }));
    this.settled = { events, response };
    return this.settled;
  }

  /** OpenAI's `error` event: the document's fields (`code`, `message`, `param`) and, as OpenAI's stream
   * carries them, the same in `error` (with the provider's `type`), which is what the SDKs read. */
  private errorEvent(error: ProviderError): ResponseEvent {
    const { code, message, param, type } = error;
    return this.event('error', { code, message, param, error: { type, code, message, param } });
  }

  /** The `done` event of each item of a native stream still in progress, which is then incomplete. */
  private closeNative(): ResponseEvent[] {
    return this.output.flatMap((item, index) => {
      if (item.status !== 'in_progress') return [];
      item.status = 'incomplete';
      return [this.event('response.output_item.done', { output_index: index, item: structuredClone(item) })];
    });
  }

  /** `response.created` (with the hooks' results, when the call has hooks) and `response.in_progress`,
   * before the first event of the answer. */
  private start(events: ResponseEvent[], hookResults: unknown): void {
    if (this.started) return;
    this.started = true;
    const response = this.inProgress();
    const created = hookResults === undefined ? { response } : { response, hook_results: hookResults };
    events.push(this.event('response.created', created));
    events.push(this.event('response.in_progress', { response }));
  }

  private ownId(upstreamId: string): string {
    let id = this.ids.get(upstreamId);
    if (id === undefined) {
      const account = upstreamId.startsWith('rs_') ? this.nativeAccount() : null;
      id = account ? reasoningItemId(account) : newItemIdLike(upstreamId);
      this.ids.set(upstreamId, id);
    }
    return id;
  }

  /** A native output item with the gateway's id. */
  private ownItem(item: Record<string, unknown>): OutputItem {
    const own = typeof item.id === 'string' ? { ...item, id: this.ownId(item.id) } : { ...item };
    return own as unknown as OutputItem;
  }

  /** A tier of OpenAI's list; a provider's own (Groq's `on_demand`) is not one the Response can show. */
  private noteServiceTier(tier: string | null | undefined): void {
    if (typeof tier === 'string' && SERVICE_TIERS.has(tier)) this.serviceTier = tier;
  }

  private noteNativeEnd(upstream: NativeResponse): void {
    const reason = upstream.incomplete_details?.reason;
    const incomplete =
      upstream.status === 'incomplete'
        ? { reason: (reason ?? 'max_output_tokens') as 'max_output_tokens' | 'content_filter' }
        : null;
    const usage = upstream.usage;
    this.nativeEnd = {
      incomplete,
      usage: usage
        ? {
            input_tokens: usage.input_tokens ?? 0,
            input_tokens_details: {
              cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
              cache_write_tokens: usage.input_tokens_details?.cache_write_tokens ?? 0,
            },
            output_tokens: usage.output_tokens ?? 0,
            output_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
            total_tokens: usage.total_tokens ?? (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0),
          }
        : undefined,
    };
  }

  private event(type: string, fields: Record<string, unknown>): ResponseEvent {
    return { type, sequence_number: this.sequence++, ...fields };
  }

  private add(item: OutputItem, events: ResponseEvent[]): number {
    const index = this.output.length;
    this.output.push(item);
    events.push(
      this.event('response.output_item.added', { output_index: index, item: structuredClone(item) }),
    );
    return index;
  }

  /** The item's one content part, opened empty before its first delta. */
  private partAdded(itemId: string, index: number, part: Record<string, unknown>): ResponseEvent {
    return this.event('response.content_part.added', {
      item_id: itemId,
      output_index: index,
      content_index: 0,
      part,
    });
  }

  private openReasoning(events: ResponseEvent[], block?: number): Extract<Open, { kind: 'reasoning' }> {
    if (this.open?.kind === 'reasoning' && this.open.block === block) return this.open;
    events.push(...this.closeOpen());
    const item = reasoningItem('', null, 'in_progress');
    const index = this.add(item, events);
    // The text's part opens before its first delta, as a message's does: a client that builds the item
    // from the events (the openai SDK's stream helpers) adds its parts from `content_part.added`.
    events.push(this.partAdded(item.id, index, { type: 'reasoning_text', text: '' }));
    if (this.summarises()) {
      events.push(
        this.event('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          part: summaryPart(''),
        }),
      );
    }
    const open = { kind: 'reasoning' as const, item, index, text: '', ...(block !== undefined && { block }) };
    this.open = open;
    return open;
  }

  private openMessage<K extends 'message' | 'refusal'>(
    events: ResponseEvent[],
    kind: K,
  ): Extract<Open, { kind: K }> {
    if (this.open?.kind === kind) return this.open as Extract<Open, { kind: K }>;
    events.push(...this.closeOpen());
    const item: OutputMessageItem = {
      type: 'message',
      id: newItemId('msg'),
      role: 'assistant',
      status: 'in_progress',
      content: [],
    };
    const index = this.add(item, events);
    events.push(
      this.partAdded(
        item.id,
        index,
        kind === 'message'
          ? { type: 'output_text', text: '', annotations: [], logprobs: [] }
          : { type: 'refusal', refusal: '' },
      ),
    );
    const open = { kind, item, index, text: '' } as Extract<Open, { kind: K }>;
    this.open = open;
    return open;
  }

  /** The function call of a chat tool index: the one of the open run, else a new one (joining the run). */
  private openFunctionCall(
    events: ResponseEvent[],
    toolIndex: number,
    callId: string | undefined,
    name: string | undefined,
  ): OpenCall {
    if (this.open?.kind !== 'function_calls') events.push(...this.closeOpen());
    const run = this.open?.kind === 'function_calls' ? this.open : undefined;
    let call = run?.calls.get(toolIndex);
    if (!call) {
      // A call whose arguments are whole JSON gets no more of them: it is done before the next is added, as
      // a stream that sends each call whole before the next has it.
      if (run) events.push(...this.closeWholeCalls(run));
      const item: FunctionCallOutputItem = {
        type: 'function_call',
        id: newItemId('fc'),
        call_id: callId ?? newItemId('fc'),
        name: name ?? '',
        arguments: '',
        status: 'in_progress',
      };
      call = { item, index: this.add(item, events) };
      if (run) run.calls.set(toolIndex, call);
      else this.open = { kind: 'function_calls', calls: new Map([[toolIndex, call]]), last: call };
    }
    (this.open as Extract<Open, { kind: 'function_calls' }>).last = call;
    return call;
  }

  /** The `done` events of each call of a run, in their output order; only the last written takes `status`. */
  private closeFunctionCalls(
    run: Extract<Open, { kind: 'function_calls' }>,
    status: 'completed' | 'incomplete',
  ): ResponseEvent[] {
    // Added in their output order.
    return [...run.calls.values()].flatMap((call) =>
      this.callDone(call, call === run.last ? status : 'completed'),
    );
  }

  /** The `done` events of the run's calls whose arguments are whole, which leave the run. */
  private closeWholeCalls(run: Extract<Open, { kind: 'function_calls' }>): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    for (const [toolIndex, call] of run.calls) {
      if (!wholeJson(call.item.arguments)) continue;
      run.calls.delete(toolIndex);
      events.push(...this.callDone(call, 'completed'));
    }
    return events;
  }

  private callDone({ item, index }: OpenCall, status: 'completed' | 'incomplete'): ResponseEvent[] {
    item.status = status;
    const events: ResponseEvent[] = [];
    if (!item.arguments) {
      // A call that came with no arguments text: its delta too, so that the deltas still add up to them.
      item.arguments = NO_ARGUMENTS;
      events.push(
        this.event('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: index,
          delta: NO_ARGUMENTS,
        }),
      );
    }
    return [
      ...events,
      this.event('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      }),
      this.event('response.output_item.done', { output_index: index, item: structuredClone(item) }),
    ];
  }

  /**
   * A translated answer holds at most `max_tool_calls` function calls, the only tools a chat provider runs:
   * further calls are ignored, as OpenAI ignores further calls of built-in tools. A native provider applies
   * the limit itself.
   */
  private maxToolCalls(): number {
    return this.shell.max_tool_calls ?? Infinity;
  }

  /** Whether a chat stream's tool call (by its index) is within the limit; the first seen are. */
  private takesToolCall(toolIndex: number): boolean {
    if (this.toolIndexes.has(toolIndex)) return true;
    if (this.ignoredToolIndexes.has(toolIndex)) return false;
    const within = this.toolIndexes.size < this.maxToolCalls();
    (within ? this.toolIndexes : this.ignoredToolIndexes).add(toolIndex);
    return within;
  }

  /** A whole answer's reasoning item, its text also the summary when one was asked. */
  private reasoningItem(text: string, signature: string | null): ReasoningOutputItem {
    const item = reasoningItem(text, signature, 'completed');
    if (this.summarises() && text) item.summary = [summaryPart(text)];
    return item;
  }

  /**
   * Whether the request asked for a summary of the reasoning: a chat provider's thinking (Claude's and
   * Gemini's are summaries of their reasoning already) is then shown as the reasoning item's summary too.
   */
  private summarises(): boolean {
    const summary = this.shell.reasoning?.summary;
    return summary != null && SUMMARY_KINDS.has(summary);
  }

  /** Whether the answer was stopped before its end: by the token limit, or by the content filter. */
  private cutShort(): boolean {
    return this.finishReason === 'length' || this.finishReason === 'content_filter';
  }

  /** The `done` events of the open item, which then takes its final shape (and `status`) in `output`. */
  private closeOpen(
    status: 'completed' | 'incomplete' = this.cutShort() ? 'incomplete' : 'completed',
  ): ResponseEvent[] {
    const open = this.open;
    if (!open) return [];
    this.open = undefined;
    if (open.kind === 'function_calls') return this.closeFunctionCalls(open, status);
    const events: ResponseEvent[] = [];
    if (open.kind === 'message') {
      const part = { type: 'output_text' as const, text: open.text, annotations: [], logprobs: [] };
      const base = { item_id: open.item.id, output_index: open.index, content_index: 0 };
      events.push(this.event('response.output_text.done', { ...base, text: open.text, logprobs: [] }));
      events.push(this.event('response.content_part.done', { ...base, part }));
      open.item.content = [part];
      open.item.status = status;
    } else if (open.kind === 'refusal') {
      const part = { type: 'refusal' as const, refusal: open.text };
      const base = { item_id: open.item.id, output_index: open.index, content_index: 0 };
      events.push(this.event('response.refusal.done', { ...base, refusal: open.text }));
      events.push(this.event('response.content_part.done', { ...base, part }));
      open.item.content = [part];
      open.item.status = status;
    } else {
      const part = { type: 'reasoning_text' as const, text: open.text };
      const base = { item_id: open.item.id, output_index: open.index, content_index: 0 };
      events.push(this.event('response.reasoning_text.done', { ...base, text: open.text }));
      events.push(this.event('response.content_part.done', { ...base, part }));
      open.item.content = [part];
      if (this.summarises()) {
        const summary = { item_id: open.item.id, output_index: open.index, summary_index: 0 };
        events.push(this.event('response.reasoning_summary_text.done', { ...summary, text: open.text }));
        events.push(
          this.event('response.reasoning_summary_part.done', { ...summary, part: summaryPart(open.text) }),
        );
        open.item.summary = [summaryPart(open.text)];
      }
      open.item.status = status;
    }
    events.push(
      this.event('response.output_item.done', { output_index: open.index, item: structuredClone(open.item) }),
    );
    return events;
  }
}

/**
 * The arguments of a call that a chat provider gave none of (a tool that takes nothing): OpenAI's own answers
 * carry `{}` for such a call, and a client parsing them (the SDK does for strict tools) cannot parse `''`.
 */
const NO_ARGUMENTS = '{}';

/** Whether a call's arguments are whole: JSON text followed by anything but blanks is no longer JSON. */
function wholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The `reasoning.summary` values that ask for one (OpenAI's). */
const SUMMARY_KINDS: ReadonlySet<string> = new Set(['auto', 'concise', 'detailed']);

function summaryPart(text: string): { type: 'summary_text'; text: string } {
  return { type: 'summary_text', text };
}

/** The Response's service tiers (the OpenAI document's `ServiceTierResponses`). */
const SERVICE_TIERS: ReadonlySet<string> = new Set([
  'auto',
  'default',
  'flex',
  'scale',
  'priority',
  'fast',
  'ultrafast',
]);

/** The hooks' results a stream's first chunk carries, if any. */
function hookResultsOf(chunk: object): unknown {
  return (chunk as { hook_results?: unknown }).hook_results;
}

function reasoningItem(
  text: string,
  signature: string | null,
  status: 'in_progress' | 'completed',
): ReasoningOutputItem {
  return {
    type: 'reasoning',
    id: newItemId('rs'),
    summary: [],
    content: text === '' && status === 'in_progress' ? [] : [{ type: 'reasoning_text', text }],
    encrypted_content: signature,
    status,
  };
}

/** Anthropic's redacted thinking: no text, its encrypted `data` kept in `encrypted_content` and sent back
 * as `redacted_thinking` on a later turn (reasoning-items.ts). */
function redactedReasoningItem(data: string): ReasoningOutputItem {
  return {
    type: 'reasoning',
    id: newItemId('rs'),
    summary: [],
    content: [],
    encrypted_content: data,
    status: 'completed',
  };
}

function responseUsage(usage: Usage | undefined): ResponseUsage | undefined {
  if (!usage) return undefined;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: {
      cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** The Response's error codes (the OpenAI document's `ResponseErrorCode`). */
const RESPONSE_ERROR_CODES: ReadonlySet<string> = new Set([
  'server_error',
  'rate_limit_exceeded',
  'invalid_prompt',
  'data_residency_mismatch',
  'bio_policy',
  'vector_store_timeout',
  'invalid_image',
  'invalid_image_format',
  'invalid_base64_image',
  'invalid_image_url',
  'image_too_large',
  'image_too_small',
  'image_parse_error',
  'image_content_policy_violation',
  'invalid_image_mode',
  'image_file_too_large',
  'unsupported_image_media_type',
  'empty_image_file',
  'failed_to_download_image',
  'image_file_not_found',
]);

/**
 * A refused rate is `rate_limit_exceeded`; a failure whose code the document lists keeps it (a native
 * provider's failed Response: `invalid_prompt`, `vector_store_timeout` …); anything else is the server's.
 */
function failureCode(error: GatewayError | ProviderError): string {
  if (error.status === 429) return 'rate_limit_exceeded';
  return error.code !== null && RESPONSE_ERROR_CODES.has(error.code) ? error.code : 'server_error';
}
