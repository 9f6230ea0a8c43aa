/**
 * OpenAI tools and tool_choice → Cohere v2. Cohere's `tool_choice` knows only REQUIRED and NONE, so
 * forcing one named function is done by offering only that function and requiring a call, and
 * `allowed_tools` by offering only the allowed functions (requiring a call when its mode is `required`).
 */
import { GatewayError } from '../../core/errors.js';
import type { Tool, ToolChoice } from '../../core/schemas/index.js';
import { applyAllowedTools } from '../shared/allowed-tools.js';
import type { CohereChatBody, CohereTool } from './cohere-api-types.js';

type ToolFields = Pick<CohereChatBody, 'tools' | 'tool_choice' | 'strict_tools'>;

export function prepareCohereTools(
  requested: Tool[] | undefined,
  requestedChoice: ToolChoice | undefined,
): ToolFields {
  const { tools, choice } = applyAllowedTools(requested ?? [], requestedChoice);
  if (tools.length === 0) {
    if (choice !== undefined && choice !== 'none' && choice !== 'auto') {
      throw new GatewayError('invalid_body', '`tool_choice` needs `tools`.', { param: 'tool_choice' });
    }
    return {};
  }
  let offered = tools;
  let toolChoice: CohereChatBody['tool_choice'];
  if (choice === 'none') toolChoice = 'NONE';
  else if (choice === 'required') toolChoice = 'REQUIRED';
  else if (typeof choice === 'object') {
    const name = choice.function.name;
    offered = tools.filter((tool) => tool.function.name === name);
    if (offered.length === 0) {
      throw new GatewayError(
        'invalid_body',
        `\`tool_choice\` names \`${name}\`, which is not in \`tools\`.`,
        {
          param: 'tool_choice',
        },
      );
    }
    toolChoice = 'REQUIRED';
  }
  const out: ToolFields = { tools: offered.map(toCohereTool) };
  if (toolChoice) out.tool_choice = toolChoice;
  if (offered.some((tool) => tool.function.strict === true) && offered.every(hasRequiredParameter)) {
    out.strict_tools = true;
  }
  return out;
}

/**
 * Cohere's strict_tools holds every tool of the call, and refuses one without a required parameter ("Tools
 * with only optional parameters are not supported in this mode"): such a call runs non-strict.
 */
function hasRequiredParameter(tool: Tool): boolean {
  const required = (tool.function.parameters as { required?: unknown } | undefined)?.required;
  return Array.isArray(required) && required.length > 0;
}

function toCohereTool(tool: Tool): CohereTool {
  const fn: CohereTool['function'] = { name: tool.function.name };
  if (tool.function.description !== undefined) fn.description = tool.function.description;
  if (tool.function.parameters !== undefined) fn.parameters = tool.function.parameters;
  return { type: 'function', function: fn };
}
