import { GatewayError } from '../../core/errors.js';
import type { Tool, ToolChoice } from '../../core/schemas/index.js';

/** A tool choice every provider's own tool options can express. */
export type PlainToolChoice = Exclude<ToolChoice, { type: 'allowed_tools' }>;

/**
 * OpenAI's `tool_choice: {type: 'allowed_tools'}` for a provider that has no such choice: only the tools it
 * allows are offered, and its mode becomes the plain choice (`auto` / `required`) over them. Any other
 * choice comes back as it is. An allowed tool that is not among `tools` is refused, naming the entry.
 */
export function applyAllowedTools<T extends Tool>(
  tools: T[],
  choice: ToolChoice | undefined,
): { tools: T[]; choice: PlainToolChoice | undefined } {
  if (typeof choice !== 'object' || choice === null || choice.type !== 'allowed_tools') {
    return { tools, choice: choice as PlainToolChoice | undefined };
  }
  const allowed = choice.allowed_tools.tools;
  if (allowed.length === 0) {
    throw new GatewayError('invalid_body', 'tool_choice.allowed_tools.tools lists no tool', {
      param: 'tool_choice.allowed_tools.tools',
    });
  }
  const names = new Set<string>();
  allowed.forEach((entry, k) => {
    const { type, function: fn } = entry as { type?: unknown; function?: { name?: unknown } };
    const name = type === 'function' ? fn?.name : undefined;
    if (typeof name !== 'string' || !tools.some((tool) => tool.function.name === name)) {
      throw new GatewayError(
        'invalid_body',
        `tool_choice.allowed_tools.tools[${k}] names no function of tools: ${JSON.stringify(entry)}`,
        { param: `tool_choice.allowed_tools.tools[${k}]` },
      );
    }
    names.add(name);
  });
  return {
    tools: tools.filter((tool) => names.has(tool.function.name)),
    choice: choice.allowed_tools.mode,
  };
}
