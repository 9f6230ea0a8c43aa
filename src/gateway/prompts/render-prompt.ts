/**
 * A prompt version and a call's variables → the request the prompt makes: the template rendered (with its
 * partials), the version's parameters, the caller's overrides over them, checked by the body schema of the
 * prompt's endpoint. Parsed templates are kept per stored version object (the lookups cache hands out the
 * same object until the record changes), so a call does not parse its template again.
 */
import { GatewayError } from '../../core/errors.js';
import type { ModelRequest } from '../../providers/types.js';
import type { PromptDocument } from '../../store/types.js';
import { ENDPOINTS, validateRequest } from '../endpoints.js';
import { referenceName } from './prompt-reference.js';
import {
  compileTemplate,
  escapeRawControlCharacters,
  renderTemplate,
  type CompiledTemplate,
  type TemplateType,
} from './prompt-template.js';

/** The largest value a variable may hold (characters of a string, or of the JSON of any other value). */
export const MAX_VARIABLE_LENGTH = 64 * 1024;

/** A partial as the template names it (`{{>slug}}`, `{{>slug@latest}}`, `{{>slug@2}}`): its text, and
 * the stored record it came from (its parse is kept per record). */
export interface LoadedPartial {
  text: string;
  record: object;
  /** The partial's id, the same in every version. */
  id: string;
}

export type PartialLoader = (reference: string) => Promise<LoadedPartial | undefined>;

export interface PromptInput {
  variables: Record<string, unknown>;
  allowUnknownVariables: boolean;
  /** The caller's body fields other than variables: they override the version's parameters. */
  overrides: Record<string, unknown>;
  stream: boolean | undefined;
}

/** The endpoint a template type calls, and the body field its rendered text fills. */
const ENDPOINT_OF: Record<TemplateType, { endpoint: 'chat' | 'completions'; field: 'messages' | 'prompt' }> =
  {
    chat: { endpoint: 'chat', field: 'messages' },
    completion: { endpoint: 'completions', field: 'prompt' },
  };

const compiled = new WeakMap<object, CompiledTemplate[]>();

/** The parse of `text` kept with `record` (one per template type and starting JSON state). */
function compiledFor(record: object, type: TemplateType, text: string, inString: boolean, param: string) {
  let variants = compiled.get(record);
  if (!variants) compiled.set(record, (variants = []));
  const slot = (type === 'chat' ? 0 : 2) + (inString ? 1 : 0);
  return (variants[slot] ??= compileTemplate(type, text, param, inString));
}

interface Collected {
  /** Each partial's text by the name the templates include it by: a Map, so that every slug is a key
   * (`__proto__` written into an object would set its prototype). */
  partials: Map<string, string>;
  required: Set<string>;
  known: Set<string>;
  /** A partial writes a raw control character inside a JSON string. */
  rawControl: boolean;
  /** Inclusions already read (name, in a section, in a string), with the deepest depth each was read
   * at: a partial included many times, or through many partials, is read again only when found deeper, so
   * the walk stays linear in the partials named. */
  visited: Map<string, number>;
}

/** How many partials may nest, one inside the other: rendering recurses through each. */
export const MAX_PARTIAL_DEPTH = 32;

/** A partial on the way down from the template: as it was named, and its id once known. */
interface Step {
  name: string;
  id?: string;
}

function cycleError(path: Step[], name: string): GatewayError {
  return new GatewayError(
    'invalid_prompt',
    `The partials include one another: ${[...path.map((step) => step.name), name].map((p) => `{{>${p}}}`).join(' → ')}`,
    { param: 'string' },
  );
}

/** Loads every partial the template includes, through partials of partials; refuses missing ones and cycles. */
async function collectPartials(
  root: CompiledTemplate,
  load: PartialLoader,
  into: Collected,
  path: Step[],
  inSection: boolean,
): Promise<void> {
  for (const use of root.partials) {
    // By slug, whatever version is named: `{{>X@latest}}` inside X is X including itself (the version
    // being stored becomes the latest once published).
    if (path.some((step) => referenceName(step.name) === referenceName(use.name))) {
      throw cycleError(path, use.name);
    }
    if (path.length >= MAX_PARTIAL_DEPTH) {
      throw new GatewayError(
        'invalid_prompt',
        `Partials nest more than ${MAX_PARTIAL_DEPTH} deep: {{>${path[0].name}}} → … → {{>${use.name}}}`,
        { param: 'string' },
      );
    }
    const sectioned = inSection || use.inSection;
    // Read already at this depth or deeper: what it includes was checked with as little room as here.
    const visit = `${use.name} ${sectioned} ${use.inString}`;
    if ((into.visited.get(visit) ?? -1) >= path.length) continue;
    into.visited.set(visit, path.length);
    const partial = await load(use.name);
    if (!partial) {
      throw new GatewayError('invalid_prompt', `The template includes {{>${use.name}}}: no such partial`, {
        param: 'string',
      });
    }
    // And by id: a partial named by its id in one place and by its slug in another is one partial.
    if (path.some((step) => step.id === partial.id)) throw cycleError(path, use.name);
    const param = `partials.${use.name}`;
    const parsed = compiledFor(partial.record, root.type, partial.text, use.inString, param);
    into.partials.set(use.name, partial.text);
    if (parsed.rawControl) into.rawControl = true;
    for (const name of parsed.known) into.known.add(name);
    if (!sectioned) for (const name of parsed.required) into.required.add(name);
    await collectPartials(parsed, load, into, [...path, { name: use.name, id: partial.id }], sectioned);
  }
}

function variableError(name: string, message: string): GatewayError {
  return new GatewayError('invalid_variables', `Variable "${name}" ${message}`, {
    param: `variables.${name}`,
  });
}

/**
 * Whether the variables give a name the template reads outside sections, to its last name (`customer.name`:
 * `customer` holds a value with a `name`), as Mustache reads it there. Own names only: `constructor` or
 * `toString` is not given by every object's prototype.
 */
function isGiven(variables: Record<string, unknown>, name: string): boolean {
  let value: unknown = variables;
  for (const key of name.split('.')) {
    if (value === null || value === undefined) return false;
    const holder = Object(value) as Record<string, unknown>;
    if (!Object.hasOwn(holder, key) || holder[key] === undefined) return false;
    value = holder[key];
  }
  return true;
}

/** Refuses a variable that none of the templates a call may send reads (`known`: the names each reads). */
export function refuseUnknownVariables(
  variables: Record<string, unknown>,
  known: ReadonlyArray<ReadonlySet<string>>,
): void {
  for (const name of Object.keys(variables)) {
    if (known.some((names) => names.has(name))) continue;
    throw variableError(
      name,
      'is not read by the template (send "allow_unknown_variables": true to allow variables it does not read)',
    );
  }
}

function checkVariables(input: PromptInput, required: ReadonlySet<string>, known: ReadonlySet<string>) {
  for (const name of required) {
    if (!isGiven(input.variables, name)) throw variableError(name, 'is missing: the template reads it');
  }
  if (!input.allowUnknownVariables) refuseUnknownVariables(input.variables, [known]);
  for (const [name, value] of Object.entries(input.variables)) {
    const length = typeof value === 'string' ? value.length : (JSON.stringify(value)?.length ?? 0);
    if (length > MAX_VARIABLE_LENGTH) {
      throw variableError(name, `is too large: ${length} characters, at most ${MAX_VARIABLE_LENGTH}`);
    }
  }
}

/** The template's output as the body field it fills: the messages array of a chat template, the text of
 * a completion template. */
function renderedField(type: TemplateType, text: string): unknown {
  if (type === 'completion') return text;
  let messages: unknown;
  try {
    messages = JSON.parse(text);
  } catch (err) {
    throw new GatewayError(
      'invalid_prompt',
      `The template does not render to JSON messages: ${(err as Error).message}`,
      { param: 'string' },
    );
  }
  if (!Array.isArray(messages)) {
    throw new GatewayError('invalid_prompt', 'The template must render to a JSON array of messages', {
      param: 'string',
    });
  }
  return messages;
}

/** The template rendered, a line break typed inside a JSON string of a chat template (or of a partial
 * included there) written as `\n`, as it would be in a variable's value. */
function renderedText(prepared: PreparedTemplate, variables: Record<string, unknown>): string {
  const text = renderTemplate(prepared.template, variables, prepared.partials);
  return prepared.template.type === 'chat' && prepared.rawControl ? escapeRawControlCharacters(text) : text;
}

interface PreparedTemplate {
  template: CompiledTemplate;
  partials: ReadonlyMap<string, string>;
  required: ReadonlySet<string>;
  known: ReadonlySet<string>;
  rawControl: boolean;
}

/** A version's parsed template with the partials it includes and the variables they all read. */
async function preparedTemplate(
  version: { prompt: PromptDocument },
  loadPartial: PartialLoader,
): Promise<PreparedTemplate> {
  const document = version.prompt;
  const template = compiledFor(version, document.template_type, document.string, false, 'string');
  if (template.partials.length === 0) {
    const { required, known, rawControl } = template;
    return { template, partials: new Map(), required, known, rawControl };
  }
  const collected: Collected = {
    partials: new Map(),
    required: new Set(template.required),
    known: new Set(template.known),
    rawControl: template.rawControl,
    visited: new Map(),
  };
  await collectPartials(template, loadPartial, collected, [], false);
  return { template, ...collected };
}

/** Where some clients nest a prompt call's hyperparameters; they go at the root of the body. */
const NESTED = 'hyperparameters';

/** Names of one setting: the deprecated one and the one that replaces it. */
const SAME_SETTING = [['max_tokens', 'max_completion_tokens']] as const;

/**
 * The version's parameters that the request leaves as they are: less `stream` (always the request's) and
 * its `stream_options` when the request does not stream (they apply to streams only), and less a setting
 * the request sends under either of its names — a version's `max_completion_tokens` would otherwise win
 * over the request's `max_tokens` at every provider, or both be sent.
 */
function versionParameters(parameters: Record<string, unknown>, input: PromptInput): Record<string, unknown> {
  const { overrides } = input;
  const { stream: _stream, ...kept } = parameters;
  if (input.stream !== true) delete kept.stream_options;
  for (const names of SAME_SETTING) {
    if (names.some((name) => overrides[name] !== undefined)) for (const name of names) delete kept[name];
  }
  return kept;
}

/**
 * The body with the answer's limit under the name its endpoint knows: `/v1/completions` has `max_tokens`
 * only, which a text prompt's limit set as `max_completion_tokens` (the name the prompt API prefers, for
 * every prompt) becomes; it wins over a `max_tokens` beside it, as it does at every adapter.
 */
function withLimitName(endpoint: 'chat' | 'completions', body: Record<string, unknown>) {
  if (endpoint !== 'completions' || body.max_completion_tokens === undefined) return body;
  const { max_completion_tokens: limit, ...rest } = body;
  return { ...rest, max_tokens: limit };
}

function render(
  document: PromptDocument,
  prepared: PreparedTemplate,
  input: PromptInput,
): ModelRequest<'chat' | 'completions'> {
  const type = document.template_type;
  const { endpoint, field } = ENDPOINT_OF[type];
  if (input.overrides[field] !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `${field} comes from the prompt's template: send variables instead`,
      {
        param: field,
      },
    );
  }
  // Forwarded, it would be refused by some providers and dropped by others, the values in it unused.
  if (input.overrides[NESTED] !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `${NESTED} are not nested: send temperature, max_completion_tokens … at the root of the body`,
      { param: NESTED },
    );
  }
  const body = withLimitName(endpoint, {
    ...versionParameters(document.parameters, input),
    ...input.overrides,
    [field]: renderedField(type, renderedText(prepared, input.variables)),
    ...(input.stream !== undefined && { stream: input.stream }),
  });
  // A version may leave the model to the targets of its config (their override_params): the body is checked
  // with a stand-in, which is not sent. prompt-targets.ts refuses a call that a target would send without one.
  const modelLater = body.model === undefined;
  try {
    const request = validateRequest(ENDPOINTS[endpoint], modelLater ? { ...body, model: 'model' } : body);
    if (modelLater) delete (request.body as { model?: string }).model;
    return request as ModelRequest<'chat' | 'completions'>;
  } catch (err) {
    if (err instanceof GatewayError && err.param?.startsWith(field)) {
      throw new GatewayError('invalid_prompt', `The template renders to invalid ${field}: ${err.message}`, {
        param: err.param,
      });
    }
    throw err;
  }
}

/** The request a prompt version makes with these variables and overrides, and the variables its template
 * (with its partials) reads. */
export async function renderPrompt(
  version: { prompt: PromptDocument },
  input: PromptInput,
  loadPartial: PartialLoader,
): Promise<{ request: ModelRequest<'chat' | 'completions'>; known: ReadonlySet<string> }> {
  const prepared = await preparedTemplate(version, loadPartial);
  checkVariables(input, prepared.required, prepared.known);
  return { request: render(version.prompt, prepared, input), known: prepared.known };
}

/** Fields of a call to the prompt, not of the request it makes. */
const CALL_FIELDS = ['variables', 'allow_unknown_variables'] as const;

/**
 * Refuses parameters that are not the request's to hold: the field the template fills (it would be
 * replaced, silently) and the call's own fields (they would be sent to the provider with every call).
 */
function checkParameterNames(document: PromptDocument): void {
  const { field } = ENDPOINT_OF[document.template_type];
  for (const name of [field, ...CALL_FIELDS]) {
    if (document.parameters[name] === undefined) continue;
    const why = name === field ? 'the template makes it' : 'each call sends it';
    throw new GatewayError('invalid_body', `parameters.${name} cannot be stored: ${why}`, {
      param: `parameters.${name}`,
    });
  }
}

/** A sample value for each name a template requires, a dotted one as nested objects (`customer.name`:
 * `{customer: {name: "sample"}}`). Without prototypes, so that a name such as `__proto__` is a key. */
function sampleVariables(required: ReadonlySet<string>): Record<string, unknown> {
  type Holder = Record<string, unknown>;
  const variables: Holder = { __proto__: null };
  for (const name of required) {
    const keys = name.split('.');
    let holder = variables;
    for (const key of keys.slice(0, -1)) {
      const next = holder[key];
      holder = (
        typeof next === 'object' && next !== null ? next : (holder[key] = { __proto__: null })
      ) as Holder;
    }
    const last = keys[keys.length - 1];
    if (!Object.hasOwn(holder, last)) holder[last] = 'sample';
  }
  return variables;
}

/** The variables a version's template, with its partials, requires (outside sections, dotted names to
 * their last name) and reads (anywhere, by their first name): what its calls must send, and may. */
export interface PromptVariables {
  required: ReadonlySet<string>;
  known: ReadonlySet<string>;
}

/**
 * Checks a version before it is stored: its template reads as Mustache, its variables sit where values
 * stay text, its partials exist without including one another in a cycle, and — rendered with a sample
 * value for each variable it requires — it makes a valid request with its parameters (a model may come
 * later, from the call or a config's override_params). Answers the variables it requires and reads.
 */
export async function checkPromptDocument(
  document: PromptDocument,
  loadPartial: PartialLoader,
): Promise<PromptVariables> {
  checkParameterNames(document);
  const prepared = await preparedTemplate({ prompt: document }, loadPartial);
  const variables = sampleVariables(prepared.required);
  try {
    render(document, prepared, { variables, allowUnknownVariables: true, overrides: {}, stream: undefined });
    return { required: prepared.required, known: prepared.known };
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'invalid_body') {
      const param = err.param ? `parameters.${err.param}` : 'parameters';
      throw new GatewayError('invalid_body', `parameters: ${err.message}`, { param });
    }
    // With sample values the only variables error is the size of the render: the template's own.
    if (err instanceof GatewayError && err.code === 'invalid_variables') {
      throw new GatewayError('invalid_prompt', `${err.message}, with a sample value for each variable`, {
        param: 'string',
      });
    }
    throw err;
  }
}

/** Checks a partial before it is stored (`id`: once it exists): Mustache, no unescaped values, and no cycle
 * through its partials. */
export async function checkPartialText(
  partial: { slug: string; id?: string },
  text: string,
  loadPartial: PartialLoader,
): Promise<void> {
  const compiled = compileTemplate('completion', text, 'string');
  await collectPartials(
    compiled,
    loadPartial,
    { partials: new Map(), required: new Set(), known: new Set(), rawControl: false, visited: new Map() },
    [{ name: partial.slug, id: partial.id }],
    false,
  );
}
