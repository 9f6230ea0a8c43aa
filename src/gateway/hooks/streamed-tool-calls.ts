/**
 * The tool calls of a streamed chat answer, for output checks: assembled from their argument deltas into
 * the message's `tool_calls` (so a check reads, and a redaction rewrites, the whole arguments — a value
 * split across deltas included), and a rewritten answer's arguments put back into the chunks. The
 * arguments are JSON the client assembles from the deltas: each call's rewritten arguments go whole into
 * its first argument delta and its later ones are emptied, so the client assembles exactly the rewrite.
 */
import type { ChatCompletionChunk, ToolCall } from '../../core/openai-types.js';

type Json = Record<string, unknown>;

/** Each choice's tool calls, by choice index, in the order of their `index`. */
export function assembleToolCalls(chunks: readonly ChatCompletionChunk[]): Map<number, ToolCall[]> {
  const byChoice = new Map<number, Map<number, ToolCall>>();
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      for (const delta of choice.delta?.tool_calls ?? []) {
        let calls = byChoice.get(choice.index);
        if (!calls) byChoice.set(choice.index, (calls = new Map()));
        let call = calls.get(delta.index);
        if (!call) {
          call = { id: '', type: 'function', function: { name: '', arguments: '' } };
          calls.set(delta.index, call);
        }
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.function.name += delta.function.name;
        if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
      }
    }
  }
  const assembled = new Map<number, ToolCall[]>();
  for (const [index, calls] of byChoice) {
    assembled.set(
      index,
      [...calls.keys()].sort((a, b) => a - b).map((toolIndex) => calls.get(toolIndex)!),
    );
  }
  return assembled;
}

/** The arguments of each tool call of a (rewritten) answer, by choice index and then tool index. */
function argumentsOf(answer: Json, chunks: readonly ChatCompletionChunk[]): Map<string, string> {
  // The answer lists a choice's calls in tool-index order (assembleToolCalls): match them by position.
  const toolIndexes = new Map<number, number[]>();
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      for (const delta of choice.delta?.tool_calls ?? []) {
        const seen = toolIndexes.get(choice.index) ?? [];
        if (!seen.includes(delta.index)) seen.push(delta.index);
        toolIndexes.set(choice.index, seen);
      }
    }
  }
  const args = new Map<string, string>();
  const choices = Array.isArray(answer.choices) ? (answer.choices as Json[]) : [];
  choices.forEach((choice, i) => {
    const index = typeof choice.index === 'number' ? choice.index : i;
    const calls = (choice.message as { tool_calls?: unknown } | undefined)?.tool_calls;
    if (!Array.isArray(calls)) return;
    const order = [...(toolIndexes.get(index) ?? [])].sort((a, b) => a - b);
    order.forEach((toolIndex, position) => {
      const text = (calls[position] as ToolCall | undefined)?.function?.arguments;
      if (typeof text === 'string') args.set(`${index}:${toolIndex}`, text);
    });
  });
  return args;
}

/** The chunks with each tool call's arguments replaced by the rewritten answer's. */
export function rewriteToolCallArguments(
  chunks: readonly ChatCompletionChunk[],
  answer: Json,
): ChatCompletionChunk[] {
  const args = argumentsOf(answer, chunks);
  if (args.size === 0) return [...chunks];
  const placed = new Set<string>();
  return chunks.map((chunk) => {
    let changed = false;
    const choices = chunk.choices.map((choice) => {
      const calls = choice.delta?.tool_calls;
      if (!calls) return choice;
      const rewritten = calls.map((call) => {
        const key = `${choice.index}:${call.index}`;
        const replacement = args.get(key);
        const piece = call.function?.arguments;
        if (replacement === undefined || typeof piece !== 'string' || piece.length === 0) return call;
        changed = true;
        const text = placed.has(key) ? '' : replacement;
        placed.add(key);
        return { ...call, function: { ...call.function, arguments: text } };
      });
      return { ...choice, delta: { ...choice.delta, tool_calls: rewritten } };
    });
    return changed ? { ...chunk, choices } : chunk;
  });
}
