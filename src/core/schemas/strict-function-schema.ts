/**
 * OpenAI's strict mode for a Responses function tool. Unlike chat, where a tool is strict only when it says
 * so, the Responses API makes a tool without `strict` strict when its schema allows it, and non-strict
 * otherwise; the Response shows the mode that was used. A strict schema must close every object
 * (`additionalProperties: false`) and require each of its properties; a tool that asks for strict with a
 * schema that does not is a 400 (`invalid_function_parameters`, naming `tools[i].parameters`), with
 * OpenAI's wording.
 */
import { GatewayError } from '../errors.js';

type Schema = Record<string, unknown>;
type Context = ReadonlyArray<string | number>;

/** A function tool as the Responses request gives it. */
export interface FunctionToolFields {
  name: string;
  parameters?: Schema | null;
  strict?: boolean | null;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where in the schema, as OpenAI words it: a Python tuple of the keys leading there. */
function inContext(context: Context, problem: string): string {
  const keys = context.map((key) => (typeof key === 'number' ? String(key) : `'${key}'`));
  return `In context=(${keys.join(', ')}${keys.length === 1 ? ',' : ''}), ${problem}`;
}

function isObjectSchema(schema: Schema): boolean {
  const { type } = schema;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || isSchema(schema.properties);
}

/** The first place under `schema` that strict mode refuses, described; undefined when there is none. */
function problemUnder(schema: unknown, context: Context): string | undefined {
  if (!isSchema(schema)) return undefined;
  if (isObjectSchema(schema)) {
    if (schema.additionalProperties !== false) {
      return inContext(context, "'additionalProperties' is required to be supplied and to be false.");
    }
    const keys = isSchema(schema.properties) ? Object.keys(schema.properties) : [];
    const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.find((key) => !required.includes(key));
    if (missing !== undefined) {
      return inContext(
        context,
        "'required' is required to be supplied and to be an array including every key in properties. " +
          `Missing '${missing}'.`,
      );
    }
  }
  const nested: Array<[unknown, Context]> = [];
  for (const key of ['properties', '$defs', 'definitions'] as const) {
    const members = schema[key];
    if (isSchema(members)) {
      for (const [name, member] of Object.entries(members)) nested.push([member, [...context, key, name]]);
    }
  }
  if (schema.items !== undefined) nested.push([schema.items, [...context, 'items']]);
  for (const key of ['anyOf', 'allOf', 'prefixItems'] as const) {
    const members = schema[key];
    if (Array.isArray(members)) members.forEach((member, i) => nested.push([member, [...context, key, i]]));
  }
  for (const [member, at] of nested) {
    const problem = problemUnder(member, at);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why strict mode cannot take these parameters, undefined when it can. No parameters (none, or `{}`) is a
 * function without arguments, which strict mode takes; otherwise the root must be an object.
 */
export function strictSchemaProblem(parameters: Schema | null | undefined): string | undefined {
  if (parameters == null || Object.keys(parameters).length === 0) return undefined;
  if (parameters.type !== 'object') {
    const type = typeof parameters.type === 'string' ? parameters.type : 'None';
    return `schema must be a JSON Schema of 'type: "object"', got 'type: "${type}"'.`;
  }
  return problemUnder(parameters, []);
}

/** Whether the tool runs strict: as it says, else when its schema allows it (as OpenAI's Responses API). */
export function effectiveStrict(tool: FunctionToolFields): boolean {
  return tool.strict ?? strictSchemaProblem(tool.parameters) === undefined;
}

/** Refuses a tool that asks for strict mode with a schema strict mode cannot take, as OpenAI does. */
export function checkStrictTools(tools: ReadonlyArray<{ type: string }> | null | undefined): void {
  (tools ?? []).forEach((tool, i) => {
    if (tool.type !== 'function' || !('name' in tool)) return;
    const fn = tool as FunctionToolFields;
    if (fn.strict !== true) return;
    const problem = strictSchemaProblem(fn.parameters);
    if (problem === undefined) return;
    throw new GatewayError(
      'invalid_function_parameters',
      `Invalid schema for function '${fn.name}': ${problem}`,
      { param: `tools[${i}].parameters` },
    );
  });
}
