/**
 * Prompt templates: Mustache (`{{var}}`, sections, `{{>partial}}`), parsed once per stored version and
 * rendered per call.
 *
 * A chat template is a JSON `messages` array written as Mustache text. Every `{{var}}` must sit inside a
 * JSON string, and its value is written as JSON string content (quotes, backslashes and control characters
 * escaped; nothing else changed, so `<` stays `<` and unicode stays as it is). Whatever a variable holds
 * — quotes, newlines, `{{`, a whole JSON document — it ends up as the literal text of that one string, and
 * the structure of the messages is the template's alone. Mustache never renders a value again, so `{{` in
 * a value is text. `{{{var}}}` and `{{&var}}` (unescaped) and delimiter changes are refused: they would
 * let a value, or the template's own reading of it, escape its string.
 *
 * A text template (a completions prompt) renders values as they are: the result is one string whatever
 * they hold.
 */
import Mustache from 'mustache';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../../core/errors.js';
import { referenceName } from './prompt-reference.js';

export type TemplateType = 'chat' | 'completion';

/** Mustache's token: [type, value, start, end, (section) children, (section) close position, …]. */
type Token = [string, string, number, number, ...unknown[]];

/** Where a JSON scan stands between two pieces of text. */
interface JsonState {
  inString: boolean;
  /** The last character was a backslash inside a string. */
  escaped: boolean;
  /** A partial included inside a JSON string: its text must stay inside it. */
  confined: boolean;
  /** Text inside a string holds a raw control character (a line break, a tab). */
  rawControl: boolean;
}

/** What rendering a template needs to know of it, computed once per text. */
export interface CompiledTemplate {
  type: TemplateType;
  text: string;
  tokens: Token[];
  /** Names the template reads outside any section, a dotted one whole (`customer.name`): a call must give
   * each, to its last name. */
  required: ReadonlySet<string>;
  /** Every name the template reads (first segment of a dotted name), sections included. */
  known: ReadonlySet<string>;
  /** Partials it includes, with whether the inclusion sits inside a section (its variables are then not
   * required) and inside a JSON string (chat templates). */
  partials: ReadonlyArray<PartialUse>;
  /** Its text writes a raw control character (a line break, a tab) inside a JSON string (chat templates):
   * the render escapes it (escapeRawControlCharacters). */
  rawControl: boolean;
}

export interface PartialUse {
  name: string;
  inSection: boolean;
  inString: boolean;
}

/**
 * The most characters a template may render to. Partials that include a partial twice, or a section over
 * a list around a partial, multiply text at each level: without a bound a few stored partials render to
 * gigabytes and hold the event loop for minutes.
 */
export const MAX_RENDERED_LENGTH = 4 * 1024 * 1024;

/**
 * The most steps a render may take: one for each list of tokens rendered (the template, each item of a
 * section, each inclusion of a partial) and one for each token in it. The same multiplication repeats
 * sections and partials that write nothing (`{{#items}}{{#tags}}{{/tags}}{{/items}}` over two long lists,
 * partials each including the next twice and ending in an empty one), which the length never bounds.
 */
export const MAX_RENDER_STEPS = 1_000_000;

/** One render's escape, and the characters and steps it may still take. */
interface RenderBudget {
  escape: (value: unknown) => string;
  charge: (characters: number) => void;
  step: (steps: number) => void;
  /** Whether a partial's lines take the indentation of the line its tag is on (Mustache's standalone
   * partials): text templates only. In a chat template that whitespace would be written into a JSON
   * string's text, and the partial rendered would not be the text checked when the prompt was stored. */
  indentPartials: boolean;
  /** The partials included so far, by the token including each (its name and indentation). */
  included: Map<object, Included | null>;
}

interface Included {
  text: string;
  tokens: Token[];
}

const textLengths = new WeakMap<object, number>();

/** The characters of a token list's own text (not of its sections' or partials'), kept per list. */
function textLength(tokens: Token[]): number {
  let length = textLengths.get(tokens);
  if (length === undefined) {
    length = 0;
    for (const [kind, value] of tokens) if (kind === 'text') length += value.length;
    textLengths.set(tokens, length);
  }
  return length;
}

/**
 * Charges a render's budget before it writes: a token list's steps and its text each time the list is
 * rendered (once per item of a section, once per inclusion of a partial), and each value as it is escaped
 * (budget.escape).
 */
class BoundedWriter extends Mustache.Writer {
  override renderTokens(
    tokens: string[][],
    context: Mustache.Context,
    partials?: Mustache.PartialsOrLookupFn,
    originalTemplate?: string,
    config?: Mustache.RenderOptions,
  ): string {
    const budget = config as RenderBudget;
    budget.step(tokens.length + 1);
    budget.charge(textLength(tokens as Token[]));
    return super.renderTokens(tokens, context, partials, originalTemplate, config);
  }

  /**
   * Mustache parses a partial at every inclusion, finding its tokens in the cache by the partial's whole
   * text (hashed again each time): a render parses each inclusion once, so that including a partial costs
   * steps, not its length, however often it is included.
   */
  override renderPartial(
    token: string[],
    context: Mustache.Context,
    partials?: Mustache.PartialsOrLookupFn,
    config?: Mustache.RenderOptions,
  ): string {
    const budget = config as RenderBudget;
    let included = budget.included.get(token);
    if (included === undefined) {
      included = this.includedText(token, partials, budget.indentPartials);
      budget.included.set(token, included);
    }
    if (included === null) return '';
    return this.renderTokens(included.tokens as never, context, partials, included.text, config);
  }

  /** The partial's text as it is included, and its tokens; null when no partial has its name. */
  private includedText(
    token: string[],
    partials: Mustache.PartialsOrLookupFn | undefined,
    indentPartials: boolean,
  ): Included | null {
    const text = typeof partials === 'function' ? partials(token[1]) : partials?.[token[1]];
    if (text === undefined || text === null) return null;
    // Mustache's token for a partial: [type, name, start, end, indentation, tag index, line has non-space].
    const [, , , , indentation, tagIndex, lineHasNonSpace] = token as unknown as Token;
    const indented =
      indentPartials && tagIndex === 0 && indentation
        ? this.indentPartial(text, indentation as string, lineHasNonSpace as boolean)
        : text;
    return { text: indented, tokens: this.parse(indented) as Token[] };
  }
}

/** Parses and caches template and partial texts (a partial's tokens are read through this writer's cache
 * when a render first includes it). Bounded in entries and in size, so a stream of new versions
 * does not grow it: an entry holds its text twice, as its key and in its tokens, and texts may be large. */
const writer = new BoundedWriter();
(writer as unknown as { templateCache: unknown }).templateCache = createTemplateCache(32 * 1024 * 1024);

/** A cache of parsed texts (Mustache's key is the text) holding at most `maxBytes` of them. */
export function createTemplateCache(maxBytes: number): LRUCache<string, Token[]> {
  return new LRUCache<string, Token[]>({
    max: 2000,
    maxSize: maxBytes,
    sizeCalculation: (_tokens, text) => 2 * text.length + 64,
  });
}

const JSON_CONTENT = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(text).slice(1, -1);
};
const AS_TEXT = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
const ESCAPES: Record<TemplateType, (value: unknown) => string> = {
  chat: JSON_CONTENT,
  completion: AS_TEXT,
};

function renderBudget(type: TemplateType): RenderBudget {
  let left = MAX_RENDERED_LENGTH;
  let stepsLeft = MAX_RENDER_STEPS;
  const charge = (characters: number) => {
    left -= characters;
    if (left < 0) {
      throw new GatewayError(
        'invalid_variables',
        `The prompt renders to more than ${MAX_RENDERED_LENGTH} characters`,
        { param: 'variables' },
      );
    }
  };
  const step = (steps: number) => {
    stepsLeft -= steps;
    if (stepsLeft < 0) {
      throw new GatewayError(
        'invalid_variables',
        `The prompt takes more than ${MAX_RENDER_STEPS} steps to render (each item of a section, each ` +
          'inclusion of a partial and each tag is one)',
        { param: 'variables' },
      );
    }
  };
  return {
    charge,
    step,
    indentPartials: type === 'completion',
    included: new Map(),
    escape: (value) => {
      const text = ESCAPES[type](value);
      charge(text.length);
      return text;
    },
  };
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError('invalid_prompt', message, { param });
}

/** The tokens of a text, or a 400 naming what Mustache could not read. */
function parse(text: string, param: string): Token[] {
  try {
    return writer.parse(text) as Token[];
  } catch (err) {
    throw invalid(`The template is not valid Mustache: ${(err as Error).message}`, param);
  }
}

function rootName(name: string): string | undefined {
  if (name === '.') return undefined;
  const dot = name.indexOf('.');
  return dot < 0 ? name : name.slice(0, dot);
}

/** Advances a JSON scan over template text (not over values: those are always string content). */
function scanText(text: string, state: JsonState, param: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!state.inString) {
      if (c === 0x22) state.inString = true;
    } else if (c < 0x20) {
      state.rawControl = true;
      state.escaped = false;
    } else if (state.escaped) state.escaped = false;
    else if (c === 0x5c) state.escaped = true;
    else if (c === 0x22) {
      if (state.confined) {
        throw invalid(
          'The partial is included inside a JSON string and would close it: write its quotes as \\"',
          param,
        );
      }
      state.inString = false;
    }
  }
}

interface Walk {
  type: TemplateType;
  param: string;
  required: Set<string>;
  known: Set<string>;
  partials: PartialUse[];
}

/** How many sections may nest in one template (or partial): rendering recurses through each. */
export const MAX_SECTION_DEPTH = 16;

/** `depth`: the sections the tokens sit in. */
function walk(tokens: Token[], walkState: Walk, json: JsonState, depth: number): void {
  const inSection = depth > 0;
  for (const token of tokens) {
    const [kind, value] = token;
    switch (kind) {
      case 'text':
        if (walkState.type === 'chat') scanText(value, json, walkState.param);
        break;
      case 'name': {
        const root = rootName(value);
        if (root !== undefined) {
          walkState.known.add(root);
          if (!inSection) walkState.required.add(value);
        }
        if (walkState.type === 'chat' && (!json.inString || json.escaped)) {
          throw invalid(
            `{{${value}}} must sit inside a JSON string of the messages (e.g. "content": "… {{${value}}} …"), ` +
              'so that its value is always text',
            walkState.param,
          );
        }
        break;
      }
      case '#':
      case '^': {
        if (depth === MAX_SECTION_DEPTH) {
          throw invalid(`Sections nest more than ${MAX_SECTION_DEPTH} deep`, walkState.param);
        }
        const root = rootName(value);
        if (root !== undefined) walkState.known.add(root);
        const before = { ...json };
        walk(token[4] as Token[], walkState, json, depth + 1);
        // A section renders its content any number of times: it must leave the JSON as it found it.
        if (walkState.type === 'chat' && (json.inString !== before.inString || json.escaped)) {
          throw invalid(
            `The section {{${kind}${value}}} opens or closes a JSON string without the other`,
            walkState.param,
          );
        }
        break;
      }
      case '>':
        walkState.partials.push({ name: value, inSection, inString: json.inString });
        break;
      case '&':
        throw invalid(
          `{{{${value}}}} and {{&${value}}} (unescaped values) are not allowed: use {{${value}}}`,
          walkState.param,
        );
      case '=':
        throw invalid('Changing the Mustache delimiters is not allowed', walkState.param);
      default:
        // Comments.
        break;
    }
  }
}

/**
 * Reads a template: Mustache syntax, where its variables sit, which names it reads and which partials it
 * includes. `inString` is where a partial's text is included (a template starts outside any string).
 */
export function compileTemplate(
  type: TemplateType,
  text: string,
  param = 'string',
  inString = false,
): CompiledTemplate {
  const tokens = parse(text, param);
  const state: Walk = { type, param, required: new Set(), known: new Set(), partials: [] };
  const json: JsonState = { inString, escaped: false, confined: inString, rawControl: false };
  walk(tokens, state, json, 0);
  if (type === 'chat' && json.inString !== inString) {
    throw invalid(
      inString
        ? 'The partial closes the JSON string it is included in'
        : 'The template leaves a JSON string open',
      param,
    );
  }
  return {
    type,
    text,
    tokens,
    required: state.required,
    known: state.known,
    partials: state.partials,
    rawControl: json.rawControl,
  };
}

/**
 * The partials a template or partial includes, by the id or slug each use names (`{{>house-style@2}}`:
 * `house-style`), in sections too: what the store records with a version, so that a change to a partial
 * finds the versions it reaches.
 */
export function includedPartials(text: string): string[] {
  const names = new Set<string>();
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token[0] === '>') names.add(referenceName(token[1]));
      else if (token[0] === '#' || token[0] === '^') visit(token[4] as Token[]);
    }
  };
  visit(parse(text, 'string'));
  return [...names];
}

/**
 * A chat template's output with every raw control character inside a JSON string written as its escape: a
 * line break typed in a template or a partial (included in a `content`) is the line break of that text, as
 * a variable's is, rather than JSON that does not parse. Values are already escaped, so the scan's idea of
 * where strings start and end is the template's.
 */
export function escapeRawControlCharacters(json: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (!inString) {
      if (c === 0x22) inString = true;
    } else if (c < 0x20) {
      out += json.slice(from, i) + JSON.stringify(json[i]).slice(1, -1);
      from = i + 1;
      escaped = false;
    } else if (escaped) escaped = false;
    else if (c === 0x5c) escaped = true;
    else if (c === 0x22) inString = false;
  }
  return from === 0 ? json : out + json.slice(from);
}

/**
 * Renders a compiled template; `partials` maps every partial name it may include to its text. A render
 * past MAX_RENDERED_LENGTH or MAX_RENDER_STEPS is stopped as it gets there: a 400 `invalid_variables`
 * naming `variables`.
 */
export function renderTemplate(
  compiled: CompiledTemplate,
  variables: Record<string, unknown>,
  partials: ReadonlyMap<string, string>,
): string {
  return writer.renderTokens(
    compiled.tokens as never,
    // Without a prototype: a name the call does not give (`constructor`, `toString`) is absent, not
    // Object's method, which Mustache would call.
    new Mustache.Context({ __proto__: null, ...variables }),
    // Looked up in a Map, not an object: a partial named `__proto__` or `constructor` is that partial.
    (name) => partials.get(name),
    compiled.text,
    renderBudget(compiled.type) as never,
  );
}
