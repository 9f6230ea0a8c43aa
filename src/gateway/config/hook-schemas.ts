/**
 * Items of the config's hook and guardrail lists, as the spec's hook table gives them. Objects are
 * closed (unknown keys rejected) except where the table leaves them open: check `parameters`,
 * feedback `metadata`, and a guardrail's extra keys, each of which names a check and holds its
 * parameters as an object.
 */
import { Type, type Static, type TProperties } from '@sinclair/typebox';

function Closed<T extends TProperties>(properties: T) {
  return Type.Object(properties, { additionalProperties: false });
}

const OpenObject = Type.Object({});

const FeedbackSchema = Closed({
  value: Type.Optional(Type.Number()),
  weight: Type.Optional(Type.Number()),
  metadata: Type.Optional(OpenObject),
});

/** What happens when a hook's checks pass or fail: feedback to record, and whether to deny. */
const OutcomeWithDeny = Closed({
  feedback: Type.Optional(FeedbackSchema),
  deny: Type.Optional(Type.Boolean()),
});
const OutcomeFeedbackOnly = Closed({ feedback: Type.Optional(FeedbackSchema) });

const HookCheckSchema = Closed({
  id: Type.String({ minLength: 1 }),
  parameters: OpenObject,
});

export const BeforeRequestHookSchema = Closed({
  id: Type.String({ minLength: 1 }),
  type: Type.Optional(Type.String()),
  on_fail: Type.Optional(OutcomeWithDeny),
  on_success: Type.Optional(OutcomeWithDeny),
  checks: Type.Optional(Type.Array(HookCheckSchema)),
});

export const AfterRequestHookSchema = Closed({
  id: Type.String({ minLength: 1 }),
  type: Type.Optional(Type.String()),
  async: Type.Optional(Type.Boolean()),
  on_fail: Type.Optional(OutcomeFeedbackOnly),
  on_success: Type.Optional(OutcomeFeedbackOnly),
  checks: Type.Optional(Type.Array(HookCheckSchema)),
});

function Guardrail(outcome: typeof OutcomeWithDeny | typeof OutcomeFeedbackOnly) {
  return Type.Union([
    Type.String({ minLength: 1, description: 'Id of a stored guardrail.' }),
    Type.Object(
      {
        id: Type.Optional(Type.String()),
        deny: Type.Optional(Type.Boolean()),
        async: Type.Optional(Type.Boolean()),
        on_fail: Type.Optional(outcome),
        on_success: Type.Optional(outcome),
      },
      {
        additionalProperties: OpenObject,
        description: 'Inline guardrail: every extra key names a check and holds its parameters.',
      },
    ),
  ]);
}

export const InputGuardrailSchema = Guardrail(OutcomeFeedbackOnly);
/** Output guardrails may also deny from on_fail / on_success. */
export const OutputGuardrailSchema = Guardrail(OutcomeWithDeny);

export type BeforeRequestHook = Static<typeof BeforeRequestHookSchema>;
export type AfterRequestHook = Static<typeof AfterRequestHookSchema>;
export type InputGuardrail = Static<typeof InputGuardrailSchema>;
export type OutputGuardrail = Static<typeof OutputGuardrailSchema>;
