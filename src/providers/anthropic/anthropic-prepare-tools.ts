import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import { applyAllowedTools } from '../shared/allowed-tools.js';
import { markedAt } from '../shared/cache-mark-origins.js';
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-api-types.js';

export interface AnthropicToolSettings {
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
}

/**
 * OpenAI `tools` / `tool_choice` / `parallel_tool_calls` → Anthropic `tools` / `tool_choice`.
 * `required` is Anthropic's `any`; `parallel_tool_calls: false` is `disable_parallel_tool_use`.
 * `allowed_tools` offers only the allowed tools, with its mode as the choice.
 * A `cache_control` set on an OpenAI tool object is passed through to the Anthropic tool.
 */
export function prepareAnthropicTools(body: ChatCompletionRequest): AnthropicToolSettings {
  const { tools, choice } = applyAllowedTools(body.tools ?? [], body.tool_choice);
  if (tools.length === 0) {
    if (typeof choice === 'object' || choice === 'required') {
      throw new GatewayError('invalid_body', 'tool_choice needs tools', { param: 'tool_choice' });
    }
    return {};
  }
  const anthropicTools = tools.map((tool, i): AnthropicTool => {
    if (tool.type !== 'function') {
      throw new GatewayError(
        'unsupported_parameter',
        `tools[${i}].type '${String(tool.type)}' is not supported by anthropic`,
        {
          param: `tools[${i}].type`,
        },
      );
    }
    const out: AnthropicTool = {
      name: tool.function.name,
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    };
    if (tool.function.description) out.description = tool.function.description;
    if (tool.function.strict === true) out.strict = true;
    const cacheControl = (tool as { cache_control?: Record<string, unknown> }).cache_control;
    if (!cacheControl) return out;
    out.cache_control = cacheControl;
    // The client's index: allowed_tools may have left some of its tools out.
    return markedAt(out, `tools[${(body.tools ?? []).indexOf(tool)}].cache_control`);
  });

  const disableParallel = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  let toolChoice: AnthropicToolChoice | undefined;
  if (choice === 'none') toolChoice = { type: 'none' };
  else if (choice === 'required') toolChoice = { type: 'any', ...disableParallel };
  else if (typeof choice === 'object') {
    const name = choice.function.name;
    if (!anthropicTools.some((tool) => tool.name === name)) {
      throw new GatewayError('invalid_body', `tool_choice names a function not in tools: ${name}`, {
        param: 'tool_choice',
      });
    }
    toolChoice = { type: 'tool', name, ...disableParallel };
  } else if (body.parallel_tool_calls === false) toolChoice = { type: 'auto', ...disableParallel };
  return toolChoice ? { tools: anthropicTools, tool_choice: toolChoice } : { tools: anthropicTools };
}
