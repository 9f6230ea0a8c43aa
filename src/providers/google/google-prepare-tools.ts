import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import type { GeminiFunctionDeclaration, GeminiTool, GeminiToolConfig } from './google-api-types.js';
import { applyAllowedTools, type PlainToolChoice } from '../shared/allowed-tools.js';
import { convertJsonSchemaToGoogleSchema } from './convert-json-schema-to-google-schema.js';

export interface GooglePreparedTools {
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
}

/**
 * `tools` / `tool_choice` (and the deprecated `functions` / `function_call`) → Gemini function
 * declarations and `functionCallingConfig`: none → NONE, auto → AUTO, required → ANY, a named function →
 * ANY restricted to that name; `allowed_tools` declares only the allowed functions, with its mode as the
 * choice.
 */
export function prepareGoogleTools(body: ChatCompletionRequest): GooglePreparedTools {
  const { tools, choice: toolChoice } = applyAllowedTools(body.tools ?? [], body.tool_choice);
  const declarations: GeminiFunctionDeclaration[] = [];
  tools.forEach((tool, i) => {
    if (tool.type !== 'function') {
      throw new GatewayError(
        'unsupported_parameter',
        `tools[${i}].type ${String(tool.type)} is not supported by google`,
        {
          param: `tools[${i}].type`,
        },
      );
    }
    declarations.push(declaration(tool.function.name, tool.function.description, tool.function.parameters));
  });
  for (const fn of body.functions ?? [])
    declarations.push(declaration(fn.name, fn.description, fn.parameters));
  if (declarations.length === 0) return {};

  const prepared: GooglePreparedTools = { tools: [{ functionDeclarations: declarations }] };
  const choice = toolChoice ?? legacyChoice(body.function_call);
  if (choice === undefined) return prepared;
  if (choice === 'none') prepared.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'auto') prepared.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'required') prepared.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (
    typeof choice === 'object' &&
    choice.type === 'function' &&
    typeof choice.function?.name === 'string'
  ) {
    const name = choice.function.name;
    if (!declarations.some((d) => d.name === name)) {
      throw new GatewayError('invalid_body', `tool_choice names ${name}, which is not among the tools`, {
        param: 'tool_choice',
      });
    }
    prepared.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
  } else {
    throw new GatewayError('unsupported_parameter', 'tool_choice of this form is not supported by google', {
      param: 'tool_choice',
    });
  }
  return prepared;
}

/**
 * true when the request declared its functions the deprecated way (`functions`, no `tools`): OpenAI then
 * answers in that form too (`message.function_call`, finish_reason `function_call`), which is all such a
 * client reads.
 */
export function usesLegacyFunctions(body: ChatCompletionRequest): boolean {
  return (body.functions?.length ?? 0) > 0 && (body.tools?.length ?? 0) === 0;
}

function declaration(
  name: string,
  description: string | undefined,
  parameters: Record<string, unknown> | undefined,
): GeminiFunctionDeclaration {
  const out: GeminiFunctionDeclaration = { name };
  if (description !== undefined) out.description = description;
  const schema = convertJsonSchemaToGoogleSchema(parameters);
  if (schema !== undefined) out.parameters = schema;
  return out;
}

function legacyChoice(choice: ChatCompletionRequest['function_call']): PlainToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
