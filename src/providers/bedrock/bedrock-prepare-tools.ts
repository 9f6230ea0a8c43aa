import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest, ChatMessage } from '../../core/schemas/index.js';
import { applyAllowedTools } from '../shared/allowed-tools.js';
import type { BedrockToolConfig } from './bedrock-api-types.js';
import { cachePointFor } from './bedrock-cache-points.js';

/**
 * OpenAI tools → Converse `toolConfig`; `strict: true` is kept (Converse then enforces the tool's input
 * schema). `required` is `any`, a named function is `tool`; `auto` (or no choice) sends no toolChoice, as
 * auto is Converse's default and models other than Claude, Mistral Large and Nova refuse the field;
 * `allowed_tools` offers only the allowed tools, with its mode as the choice. Converse has no `none`: the tools are left out, unless the history holds
 * tool calls (Converse then requires the tool definitions), in which case they are sent without a choice.
 * A history with tool calls and no tools at all (valid for OpenAI) gets one inert placeholder tool, since
 * Converse refuses toolUse and toolResult blocks without a toolConfig. A tool's `cache_control` is a
 * `cachePoint` after its spec.
 */
export function prepareBedrockTools(body: ChatCompletionRequest): BedrockToolConfig | undefined {
  const { tools, choice } = applyAllowedTools(body.tools ?? [], body.tool_choice);
  if (tools.length === 0) {
    if (typeof choice === 'object' || choice === 'required') {
      throw new GatewayError('invalid_body', 'tool_choice needs tools', { param: 'tool_choice' });
    }
    return historyHasTools(body.messages ?? []) ? { tools: [NO_TOOLS_PLACEHOLDER] } : undefined;
  }
  const specs = tools.flatMap((tool, i) => {
    if (tool.type !== 'function') {
      throw new GatewayError(
        'unsupported_parameter',
        `tools[${i}].type '${String(tool.type)}' is not supported by bedrock`,
        {
          param: `tools[${i}].type`,
        },
      );
    }
    const spec = {
      toolSpec: {
        name: tool.function.name,
        ...(tool.function.description ? { description: tool.function.description } : {}),
        inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } },
        ...(tool.function.strict === true ? { strict: true } : {}),
      },
    };
    // The client's index: allowed_tools may have left some of its tools out.
    const param = `tools[${(body.tools ?? []).indexOf(tool)}].cache_control`;
    return [spec, ...cachePointFor((tool as { cache_control?: unknown }).cache_control, param)];
  });
  if (choice === 'none') return historyHasTools(body.messages ?? []) ? { tools: specs } : undefined;
  if (choice === 'required') return { tools: specs, toolChoice: { any: {} } };
  if (typeof choice === 'object') {
    const name = choice.function.name;
    if (!specs.some((spec) => 'toolSpec' in spec && spec.toolSpec.name === name)) {
      throw new GatewayError('invalid_body', `tool_choice names a function not in tools: ${name}`, {
        param: 'tool_choice',
      });
    }
    return { tools: specs, toolChoice: { tool: { name } } };
  }
  // auto is Converse's default, and only some models (Claude, Mistral Large, Nova) take a toolChoice at all.
  return { tools: specs };
}

/** What Converse is given as the tools of a turn that offers none after a history with tool calls. */
const NO_TOOLS_PLACEHOLDER = {
  toolSpec: {
    name: 'no_tools_available',
    description: 'No tools are available in this turn. Do not call this tool; answer in text.',
    inputSchema: { json: { type: 'object', properties: {} } },
  },
};

function historyHasTools(messages: ChatMessage[]): boolean {
  return messages.some((m) => m.role === 'tool' || ('tool_calls' in m && (m.tool_calls?.length ?? 0) > 0));
}
