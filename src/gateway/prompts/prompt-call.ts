/**
 * A prompt completion before it runs: the body read, the prompt and version selected (through the lookups
 * cache, so a new version or a publish is what every node serves next), the template rendered into the
 * request, and where the version says to send it. What follows is any model call: a CallContext and
 * `execute`.
 */
import { GatewayError } from '../../core/errors.js';
import { validatePromptCompletionRequest } from '../../core/schemas/index.js';
import type { ModelRequest } from '../../providers/types.js';
import type { PromptDocument, Repositories, StoredPrompt, StoredPromptVersion } from '../../store/types.js';
import type { PromptRef } from '../call-context.js';
import { HEADERS } from '../context.js';
import type { Lookups } from '../lookups.js';
import { parsePromptReference, selectPromptVersion, selectedVersion } from './prompt-reference.js';
import { renderPrompt, type PartialLoader } from './render-prompt.js';

export interface PreparedPromptCall {
  request: ModelRequest<'chat' | 'completions'>;
  prompt: PromptRef;
  /** The call's variables, the names the prompt's template reads, and whether the call allows others. */
  variables: Record<string, unknown>;
  known: ReadonlySet<string>;
  allowUnknownVariables: boolean;
  /** The version's destination as an `x-gateway-config` value (a stored config's id, or config JSON);
   * undefined when it names none and the request's headers say where to go. */
  destination: string | undefined;
}

/** A stored prompt's version, selected by a reference (`slug`, `slug@latest`, `slug@3`); 404 naming what
 * is not there. */
export async function loadPromptVersion(
  lookups: Lookups,
  workspaceId: string,
  reference: string,
): Promise<{ prompt: StoredPrompt; version: StoredPromptVersion }> {
  const parsed = parsePromptReference(reference);
  const { name } = parsed;
  const { prompt, number, version } = await selectPromptVersion(lookups, workspaceId, parsed);
  if (!prompt) {
    throw new GatewayError('prompt_not_found', `No prompt "${name}" in this workspace`, {
      param: 'promptId',
    });
  }
  if (!version) {
    throw new GatewayError('prompt_not_found', `The prompt "${name}" has no version ${number}`, {
      param: 'promptId',
    });
  }
  return { prompt, version };
}

/** Where partials are read from: the lookups cache for a call, the store itself for a check that must
 * see what is committed (`storedPartials`). */
export type PartialSource = Pick<Lookups, 'promptPartial' | 'promptPartialVersion'>;

/** The store as a source of partials: what it holds now, where this node's cache may still hold what
 * another node has just changed. */
export function storedPartials(
  store: Pick<Repositories, 'getPromptPartial' | 'getPromptPartialVersion'>,
): PartialSource {
  return {
    promptPartial: (workspaceId, idOrSlug) => store.getPromptPartial(workspaceId, idOrSlug),
    promptPartialVersion: (workspaceId, partialId, version) =>
      store.getPromptPartialVersion(workspaceId, partialId, version),
  };
}

/** Partials as a template names them, published or selected, through the lookups cache (or `storedPartials`). */
export function partialLoader(lookups: PartialSource, workspaceId: string): PartialLoader {
  return async (reference) => {
    const { name, selector } = parsePromptReference(reference, 'partial');
    const partial = await lookups.promptPartial(workspaceId, name);
    if (!partial) return undefined;
    const version = await lookups.promptPartialVersion(
      workspaceId,
      partial.id,
      selectedVersion(partial, selector),
    );
    return version && { text: version.partial.string, record: version, id: partial.id };
  };
}

/** Where a version sends its calls: a stored config (its id or slug), an inline config, or a config of
 * its virtual key or provider alone. */
export type VersionDestination =
  | { stored: string }
  | { inline: Record<string, unknown>; root: Record<string, unknown> }
  | { root: Record<string, unknown> };

/** A version's destination, as one names at most one of them (a stored or inline config, else its virtual
 * key, else its provider); undefined when it names none, and the call's own headers say where to go. */
export function versionDestination(document: PromptDocument): VersionDestination | undefined {
  const { virtual_key, provider, config } = document;
  if (typeof config === 'string') return { stored: config };
  if (config !== undefined) return { inline: config, root: config };
  if (virtual_key !== undefined) return { root: { virtual_key } };
  if (provider !== undefined) return { root: { provider } };
  return undefined;
}

const destinations = new WeakMap<object, string | undefined>();

/** Where a version sends its calls, as a value of the `x-gateway-config` header (kept per version). */
export function destinationOf(version: { prompt: PromptDocument }): string | undefined {
  if (destinations.has(version)) return destinations.get(version);
  const destination = versionDestination(version.prompt);
  const value =
    destination === undefined
      ? undefined
      : 'stored' in destination
        ? destination.stored
        : JSON.stringify(destination.root);
  destinations.set(version, value);
  return value;
}

/**
 * An error about the config a version's destination makes (a stored config since deleted or archived, one
 * that names no provider), named as the prompt's: the call sent no x-gateway-config, so an error naming that
 * header would point at nothing the caller sent. `param`: where the call names the prompt.
 */
export function destinationError(
  err: unknown,
  prompt: { slug: string; version: number },
  param: string,
): unknown {
  if (!(err instanceof GatewayError) || err.param !== HEADERS.config) return err;
  return new GatewayError(
    err.code,
    `The prompt "${prompt.slug}" (version ${prompt.version}) sends its calls to a config: ${err.message}`,
    { param, cause: err },
  );
}

/**
 * `unknownVariables: 'later'`: a variable the template does not read is left for the caller to judge
 * (`refuseUnknownVariables`), as a call whose config names prompt_id targets sends other prompts, which may
 * read it.
 */
export async function preparePromptCall(
  lookups: Lookups,
  workspaceId: string,
  reference: string,
  rawBody: unknown,
  unknownVariables: 'refuse' | 'later' = 'refuse',
): Promise<PreparedPromptCall> {
  const { variables, allow_unknown_variables, stream, ...overrides } =
    validatePromptCompletionRequest(rawBody);
  const allowUnknownVariables = allow_unknown_variables === true;
  const { prompt, version } = await loadPromptVersion(lookups, workspaceId, reference);
  const { request, known } = await renderPrompt(
    version,
    {
      variables,
      allowUnknownVariables: allowUnknownVariables || unknownVariables === 'later',
      overrides,
      stream,
    },
    partialLoader(lookups, workspaceId),
  );
  return {
    request,
    prompt: { id: prompt.id, slug: prompt.slug, version: version.version },
    variables,
    known,
    allowUnknownVariables,
    destination: destinationOf(version),
  };
}
