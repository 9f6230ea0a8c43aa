/**
 * The tools of a Responses request: the OpenAI document's `Tool` union, one schema per `type`, each with the
 * fields the document requires (and the closed lists it gives), so that a tool of an unknown type or
 * without what it needs is refused before any provider is called, naming `tools[i].<field>`. What else a
 * tool carries passes on: a native provider reads it, and a translated one refuses every built-in tool
 * (to-chat-request.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common-fields.js';

const FunctionToolFields = {
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Nullable(Type.String())),
  parameters: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  /** Omitted: strict when the schema allows it (strict-function-schema.ts). */
  strict: Type.Optional(Nullable(Type.Boolean())),
};

/** A function tool, the only kind a translated provider can run. */
const FunctionToolSchema = Type.Object({ type: Type.Literal('function'), ...FunctionToolFields });

/**
 * The file-search tool, with the fields the spec gives it (bounds as OpenAI's document states them); what
 * else it carries (`hybrid_search`) passes on.
 */
const FileSearchToolSchema = Type.Object({
  type: Type.Literal('file_search'),
  vector_store_ids: Type.Array(Type.String()),
  max_num_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  filters: Type.Optional(Nullable(Type.Object({ type: Type.String({ minLength: 1 }) }))),
  ranking_options: Type.Optional(
    Type.Object({
      ranker: Type.Optional(Type.String({ minLength: 1 })),
      score_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    }),
  ),
});

const literals = (values: readonly string[]) => Type.Union(values.map((value) => Type.Literal(value)));

const ComputerUsePreviewToolSchema = Type.Object({
  type: Type.Literal('computer_use_preview'),
  environment: literals(['windows', 'mac', 'linux', 'ubuntu', 'browser']),
  display_width: Type.Integer(),
  display_height: Type.Integer(),
});

const SearchContextSize = Type.Optional(literals(['low', 'medium', 'high']));

const WebSearchToolSchema = Type.Object({
  type: literals(['web_search', 'web_search_2025_08_26']),
  search_context_size: SearchContextSize,
});

const WebSearchPreviewToolSchema = Type.Object({
  type: literals(['web_search_preview', 'web_search_preview_2025_03_11']),
  search_context_size: SearchContextSize,
});

/** One of `server_url`, `connector_id` or `tunnel_id` is needed too: OpenAI's to check, as it adds ways. */
const McpToolSchema = Type.Object({
  type: Type.Literal('mcp'),
  server_label: Type.String({ minLength: 1 }),
  server_url: Type.Optional(Type.String({ minLength: 1 })),
});

/** A container's id, or a container made for the call (`{"type": "auto"}`). */
const CodeInterpreterToolSchema = Type.Object({
  type: Type.Literal('code_interpreter'),
  container: Type.Union([
    Type.String({ minLength: 1 }),
    Type.Object({ type: Type.Literal('auto'), file_ids: Type.Optional(Type.Array(Type.String())) }),
  ]),
});

const CustomToolSchema = Type.Object({
  type: Type.Literal('custom'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  format: Type.Optional(
    Type.Union([
      Type.Object({ type: Type.Literal('text') }),
      Type.Object({
        type: Type.Literal('grammar'),
        syntax: literals(['lark', 'regex']),
        definition: Type.String(),
      }),
    ]),
  ),
});

/** Function and custom tools grouped under a name, which the model finds by searching them. */
const NamespaceToolSchema = Type.Object({
  type: Type.Literal('namespace'),
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  tools: Type.Array(Type.Union([FunctionToolSchema, CustomToolSchema]), { minItems: 1 }),
});

/** A tool whose only required field is its type. */
const bare = <T extends string>(type: T) => Type.Object({ type: Type.Literal(type) });

/** `tools`: one flat union in the document's order, so that a tool's `type` picks the schema it is reported
 * against, and an unknown type's error lists the known ones. */
export const ResponsesToolsField = Type.Array(
  Type.Union([
    FunctionToolSchema,
    FileSearchToolSchema,
    bare('computer'),
    ComputerUsePreviewToolSchema,
    WebSearchToolSchema,
    McpToolSchema,
    CodeInterpreterToolSchema,
    bare('programmatic_tool_calling'),
    bare('image_generation'),
    bare('local_shell'),
    bare('shell'),
    CustomToolSchema,
    NamespaceToolSchema,
    bare('tool_search'),
    WebSearchPreviewToolSchema,
    bare('apply_patch'),
  ]),
);

export type ResponsesTool = Static<typeof ResponsesToolsField>[number];
