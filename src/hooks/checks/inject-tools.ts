/**
 * `default.injectTools` {tools, replaceExisting, dedupeByName, toolChoicePreset, resetToolChoice,
 * requiredFunctionName}: a request mutator, as the reference gateway's, that adds the config's tools to a
 * chat request's `tools` (or puts them in their place) and may set its `tool_choice`; it passes.
 *
 * A function tool may be written flat (`{type: "function", name, description, parameters}`), as that gateway
 * takes it: it is sent in chat's form (`{type: "function", function: {…}}`). With `dedupeByName` (the
 * default) a tool whose name an earlier one has is dropped, the request's own tools coming first. A preset
 * sets `tool_choice` when the request has none, or always with `resetToolChoice`: `auto`, `none`, or, for
 * `add_any` and `add_all`, the function `requiredFunctionName` names when a tool of it is there, else
 * `required`. Only chat completions are changed: other calls (Messages and Responses calls, whose tools have
 * other shapes) pass as they are.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';

type Json = Record<string, unknown>;

const ToolSchema = Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true });

const PresetSchema = Type.Union([
  Type.Literal('add_any'),
  Type.Literal('add_all'),
  Type.Literal('auto'),
  Type.Literal('none'),
]);

const Parameters = Type.Object(
  {
    tools: Type.Union([ToolSchema, Type.Array(ToolSchema, { minItems: 1 })]),
    replaceExisting: Type.Optional(Type.Boolean()),
    dedupeByName: Type.Optional(Type.Boolean()),
    toolChoicePreset: Type.Optional(PresetSchema),
    resetToolChoice: Type.Optional(Type.Boolean()),
    requiredFunctionName: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

function toolList(tools: Static<typeof Parameters>['tools']): Json[] {
  return Array.isArray(tools) ? tools : [tools];
}

/** A function tool in chat's nested form; other tools as written. */
function chatTool(tool: Json): Json {
  if (tool.type !== 'function' || isJson(tool.function)) return tool;
  const { name, description, parameters, strict, ...rest } = tool;
  const fn: Json = { name };
  if (description !== undefined) fn.description = description;
  if (parameters !== undefined) fn.parameters = parameters;
  if (strict !== undefined) fn.strict = strict;
  return { ...rest, type: 'function', function: fn };
}

function functionName(tool: unknown): string | undefined {
  if (!isJson(tool) || tool.type !== 'function' || !isJson(tool.function)) return undefined;
  return typeof tool.function.name === 'string' ? tool.function.name : undefined;
}

/** What makes two tools the same for `dedupeByName`: a function's name, else the tool's type and name. */
function toolKey(tool: unknown): string {
  const name = functionName(tool);
  if (name !== undefined) return `function:${name}`;
  const json = isJson(tool) ? tool : {};
  return JSON.stringify([json.type ?? null, json.name ?? null]);
}

function deduped(tools: readonly unknown[]): unknown[] {
  const seen = new Set<string>();
  return tools.filter((tool) => {
    const key = toolKey(tool);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function presetChoice(
  preset: Static<typeof PresetSchema>,
  tools: readonly unknown[],
  requiredFunctionName: string | undefined,
): unknown {
  if (preset === 'auto' || preset === 'none') return preset;
  if (
    requiredFunctionName !== undefined &&
    tools.some((tool) => functionName(tool) === requiredFunctionName)
  ) {
    return { type: 'function', function: { name: requiredFunctionName } };
  }
  return 'required';
}

export const injectTools = defineCheck({
  id: 'injectTools',
  events: ['beforeRequestHook'],
  parameters: Parameters,
  refine({ tools }) {
    const list = toolList(tools);
    const unnamed = list.findIndex(
      (tool) =>
        tool.type === 'function' &&
        typeof (isJson(tool.function) ? tool.function.name : tool.name) !== 'string',
    );
    if (unnamed === -1) return null;
    const param = Array.isArray(tools) ? `parameters.tools[${unnamed}]` : 'parameters.tools';
    return { param, message: 'is a function tool without a name (function.name, or name)' };
  },
  run(ctx, p) {
    const body = ctx.request.json;
    if (ctx.callType !== 'chatComplete' || !Array.isArray(body.messages)) {
      return {
        verdict: true,
        explanation: 'Only chat completions get tools; the request was left as it is.',
      };
    }
    const incoming = toolList(p.tools).map(chatTool);
    const existing: unknown[] = Array.isArray(body.tools) ? body.tools : [];
    const joined = p.replaceExisting === true ? incoming : [...existing, ...incoming];
    const tools = p.dedupeByName === false ? joined : deduped(joined);
    const transformed: Json = { ...body, tools };
    const hasChoice = body.tool_choice !== undefined && body.tool_choice !== null;
    if (p.toolChoicePreset !== undefined && (p.resetToolChoice === true || !hasChoice)) {
      transformed.tool_choice = presetChoice(p.toolChoicePreset, tools, p.requiredFunctionName);
    }
    return {
      verdict: true,
      explanation: `${incoming.length} tool(s) injected; the request has ${tools.length}.`,
      data: { injectedCount: incoming.length, totalTools: tools.length },
      transformed,
    };
  },
});

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
