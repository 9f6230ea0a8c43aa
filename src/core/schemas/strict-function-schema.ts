/**
 * OpenAI's strict mode for a Responses function tool. Unlike chat, where a tool is strict only when it says
 * so, the Responses API makes a tool without `strict` strict when its schema allows it, and non-strict
 * otherwise; the Response shows the mode that was used. A strict schema keeps to OpenAI's rules
 * (strict-json-schema.ts: every object closed, every property required, the supported keywords, the size
 * limits); a tool that asks for strict with a schema that does not is a 400
 * (`invalid_function_parameters`, naming `tools[i].parameters`), with OpenAI's wording.
 */
import { GatewayError } from '../errors.js';
import { strictSchemaProblem } from './strict-json-schema.js';

type Schema = Record<string, unknown>;

/** A function tool as the Responses request gives it. */
export interface FunctionToolFields {
  name: string;
  parameters?: Schema | null;
  strict?: boolean | null;
}

/**
 * Why strict mode cannot take these parameters, undefined when it can (strict-json-schema.ts). No
 * parameters (none, or `{}`) is a function without arguments, which strict mode takes.
 */
export function strictParametersProblem(parameters: Schema | null | undefined): string | undefined {
  if (parameters == null || Object.keys(parameters).length === 0) return undefined;
  return strictSchemaProblem(parameters);
}

/** Whether the tool runs strict: as it says, else when its schema allows it (as OpenAI's Responses API). */
export function effectiveStrict(tool: FunctionToolFields): boolean {
  return tool.strict ?? strictParametersProblem(tool.parameters) === undefined;
}

/** Refuses a function that asks for strict mode with a schema strict mode cannot take, as OpenAI does. */
function checkStrictFunction(fn: FunctionToolFields, param: string): void {
  if (fn.strict !== true) return;
  const problem = strictParametersProblem(fn.parameters);
  if (problem === undefined) return;
  throw new GatewayError(
    'invalid_function_parameters',
    `Invalid schema for function '${fn.name}': ${problem}`,
    {
      param,
    },
  );
}

/** The Responses request's function tools (`tools[i].parameters`). */
export function checkStrictTools(tools: ReadonlyArray<{ type: string }> | null | undefined): void {
  (tools ?? []).forEach((tool, i) => {
    if (tool.type !== 'function' || !('name' in tool)) return;
    checkStrictFunction(tool as FunctionToolFields, `tools[${i}].parameters`);
  });
}

/** The chat request's function tools (`tools[i].function.parameters`), strict only when they say so. */
export function checkStrictChatTools(tools: ReadonlyArray<{ function: object }> | undefined): void {
  (tools ?? []).forEach((tool, i) => {
    checkStrictFunction(tool.function as FunctionToolFields, `tools[${i}].function.parameters`);
  });
}
