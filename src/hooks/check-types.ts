/**
 * The contract between the hook engine (src/gateway/hooks/, which runs the config's hook and guardrail
 * lists as a pipeline step) and the checks it runs (src/hooks/checks/, one module per built-in check).
 * A check is a pure function of what it is shown; anything that leaves the process (a webhook, a
 * model-judged verdict) goes through the services the engine hands it, so the address policy, the
 * timeout and the routing stay the engine's.
 *
 * Check ids and parameters are those the seed's users already write (`default.contains`, `{words,
 * operator}`); docs/guardrails.md lists them.
 */
import type { TSchema } from '@sinclair/typebox';

/** Where a hook runs: before the provider call (on the request) or after it (on the answer). */
export type HookEvent = 'beforeRequestHook' | 'afterRequestHook';

/** How a call's text is read (hooks/text.ts): a chat's, a completion's, or an embedding's input. */
export type HookRequestType = 'chatComplete' | 'complete' | 'embed';

/**
 * The endpoint called, under the reference gateway's names for it: what `default.allowedRequestTypes`
 * judges and what a webhook is told. Messages and Responses calls are read as chats (`requestType`) but are
 * calls of their own kind.
 */
export type CallType =
  'chatComplete' | 'complete' | 'embed' | 'messages' | 'messagesCountTokens' | 'createModelResponse';

type Json = Record<string, unknown>;

/** What a check is shown. `text` is what text checks read: see hooks/text.ts for how it is drawn from a body. */
export interface CheckContext {
  event: HookEvent;
  requestType: HookRequestType;
  callType: CallType;
  request: { json: Json; text: string };
  /** Present after the call: the answer (for a stream, the assembled final answer) and its status. */
  response?: { json: Json; text: string; statusCode: number };
  /** The provider and model of the target that answered (after) or will be called (before). */
  provider: string;
  model: string | undefined;
  /** The request's metadata (x-gateway-metadata). */
  metadata: Record<string, string>;
  /** The client's request headers, names lower-case (what `default.jwt` reads its token from). Never sent
   * on by a check: they carry the caller's credentials. Empty for a job's call. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Aborted when the check's timeout passes or the client goes away. */
  signal: AbortSignal;
  /** When the check's timeout passes, on `performance.now()`'s clock: a check that waits for something it can
   * do without (a key set fetched again) stops waiting shortly before, and gives its verdict without it,
   * rather than run out of time (an error, which `on_error` passes by default). Absent where a check runs
   * outside the engine. */
  deadline?: number;
  /** The id of the hook's span in the call's trace, which a call the check has the gateway make (a judge's)
   * is traced under; drawn when first read. Absent where a check runs outside a call's hooks. */
  hookSpanId?: string;
}

/** Outbound calls a check may make; given by the engine, which enforces the address policy and timeout. */
export interface CheckServices {
  /** POST a JSON body to `url` (custom-host address policy applied, the body HMAC-signed in a header the engine
   * documents); resolves with the status and parsed JSON body (undefined when not JSON). Rejects on refusal
   * (naming `field`, the check's parameter that holds the URL), network error or abort. `sentSecrets`: the
   * engine's own secrets behind what it added to the call (the signing key), which the receiver may know and
   * a check masks in what it passes on of the answer. */
  postJson(
    url: string,
    body: unknown,
    headers: Record<string, string>,
    signal: AbortSignal,
    field: string,
  ): Promise<{ status: number; body: unknown; sentSecrets?: readonly string[] }>;
  /** GET `url` (custom-host address policy applied, redirects not followed, the answer bounded at 1 MiB);
   * resolves with the status and parsed JSON body (undefined when not JSON). Rejects on refusal (naming
   * `field`, the check's parameter that holds the URL), network error, an answer too large, or abort. */
  getJson(url: string, signal: AbortSignal, field: string): Promise<{ status: number; body: unknown }>;
  /** Whether `url` is reachable: its host resolves (`dnsOnly`), or it answers a HEAD request with a status
   * below 400 (redirects not followed count as reachable). Refused addresses count as unreachable. */
  probeUrl(url: string, dnsOnly: boolean, signal: AbortSignal): Promise<boolean>;
  /** Ask a model, reached through the gateway's own routing with the config or virtual key named, for a chat
   * completion; resolves with the assistant's text. `hookSpanId` (CheckContext's) is the span the call is
   * traced under; the call's request span when absent. */
  judge(
    target: { config?: string; virtual_key?: string },
    messages: Array<{ role: 'system' | 'user'; content: string }>,
    signal: AbortSignal,
    hookSpanId?: string,
  ): Promise<string>;
}

/** A check's result. `verdict: true` means the check passed (after `not` is applied by the engine). */
export interface CheckVerdict {
  verdict: boolean;
  /** One sentence saying why, shown to the caller in hook_results. */
  explanation?: string;
  /** Check-specific detail (matched words, PII found, the webhook's answer …), shown in hook_results. */
  data?: unknown;
  /** A mutator's rewrite: the new request body (before) or answer body (after). The engine applies it. */
  transformed?: Json;
}

/** One built-in check. */
export interface CheckDefinition<P = Record<string, unknown>> {
  /** Without the `default.` prefix: `contains`, `regexMatch`, `pii` … */
  id: string;
  /** The parameters, validated at config validation time (unknown keys refused). `not` is the engine's. */
  parameters: TSchema;
  /** Events the check makes sense on; a config using it elsewhere is refused. Omitted: both. */
  events?: readonly HookEvent[];
  /** Whether the check, with these parameters, rewrites the answer whenever it finds something to rewrite
   * (`default.pii` with `redact`, `default.regexReplace`): the engine holds a stream back for it, as for a
   * hook that may deny. Omitted: it does not (a webhook's rewrite is its answer's choice, not the config's). */
  rewrites?(parameters: P): boolean;
  run(ctx: CheckContext, parameters: P, services: CheckServices): CheckVerdict | Promise<CheckVerdict>;
}
