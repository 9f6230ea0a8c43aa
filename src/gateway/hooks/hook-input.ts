/**
 * What a hook list is shown of its call: the request and, after the call, the answer (HookInput).
 *
 * The text checks read (hooks/text.ts: the last message, the first choice's content …) is drawn from a
 * body when a check first reads it, and kept: the checks of a call that read text share one drawing, and
 * a list whose checks read none (model, metadata, request type, JSON checks) never draws it. A mutator's
 * rewrite gives a new body, whose text is drawn anew when read.
 */
import type { CheckContext, HookRequestType } from '../../hooks/check-types.js';
import { answerText, requestText } from '../../hooks/text.js';

type Json = Record<string, unknown>;

/** What the checks of a list are shown; `signal`, `deadline` and the hook's span are added per check. */
export type HookInput = Omit<CheckContext, 'signal' | 'deadline' | 'hookSpanId'>;

type ShownBody = CheckContext['request'];

class ShownRequest implements ShownBody {
  private drawn: string | undefined;

  constructor(
    private readonly requestType: HookRequestType,
    readonly json: Json,
  ) {}

  get text(): string {
    return (this.drawn ??= requestText(this.requestType, this.json));
  }
}

class ShownAnswer implements ShownBody {
  private drawn: string | undefined;

  constructor(
    private readonly requestType: HookRequestType,
    readonly json: Json,
    readonly statusCode: number,
  ) {}

  get text(): string {
    return (this.drawn ??= answerText(this.requestType, this.json));
  }
}

/** The request as checks see it, its text drawn on first read. */
export function shownRequest(requestType: HookRequestType, body: Json): CheckContext['request'] {
  return new ShownRequest(requestType, body);
}

/** The answer as checks see it, its text drawn on first read. */
export function shownAnswer(
  requestType: HookRequestType,
  body: Json,
  statusCode: number,
): NonNullable<CheckContext['response']> {
  return new ShownAnswer(requestType, body, statusCode);
}

/** The input with the request (before) or answer (after) replaced by a mutator's rewrite. */
export function withBody(input: HookInput, body: Json): HookInput {
  if (input.event === 'beforeRequestHook') {
    return { ...input, request: shownRequest(input.requestType, body) };
  }
  const { statusCode } = input.response as NonNullable<HookInput['response']>;
  return { ...input, response: shownAnswer(input.requestType, body, statusCode) };
}
