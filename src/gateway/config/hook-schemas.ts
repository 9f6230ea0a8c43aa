/**
 * Items of the config's hook and guardrail lists, as the spec's hook table gives them. Objects are
 * closed (unknown keys rejected) except where the table leaves them open: check `parameters`,
 * feedback `metadata`, and a guardrail's extra keys, each of which names a check and holds its
 * parameters as an object. A check's parameters are checked against the check's own schema by
 * hook-specs.ts, which also turns the guardrail shorthand into hooks.
 *
 * Beyond the spec's table, every hook may say `sequential` (its checks run one after the other) and
 * `async` (its result is recorded only), and an after-request hook may `deny` like an output guardrail:
 * the shorthand and its expansion must be able to say the same things. A hook may also say `deny` at its
 * top level, where the reference gateway reads it (configs written for it put it there): it is the hook's
 * `on_fail.deny`, as a guardrail's `deny` is. A check may say `is_enabled: false` (in a guardrail, among
 * its parameters), as there too: it is left out of its hook. A guardrail may say its `type` as a hook does
 * (the reference gateway takes it from the shorthand too): `mutator` runs its checks in order.
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
  is_enabled: Type.Optional(
    Type.Boolean({
      description:
        'false: the check is not run (nor its parameters checked), as the reference gateway skips it.',
    }),
  ),
});

const Sequential = Type.Optional(
  Type.Boolean({ description: 'Run the checks one after the other, in order (default: in parallel).' }),
);
const Async = Type.Optional(
  Type.Boolean({ description: 'Run without delaying or changing the answer; the result is only recorded.' }),
);
const HookDeny = Type.Optional(
  Type.Boolean({
    description: "The hook's `on_fail.deny` (it wins over one given there), as a guardrail's `deny`.",
  }),
);
const HookType = Type.Optional(
  Type.Union([Type.Literal('guardrail'), Type.Literal('mutator')], {
    description:
      '`guardrail` (a verdict) or `mutator` (may rewrite the request or answer; its checks run one after the other).',
  }),
);

export const BeforeRequestHookSchema = Closed({
  id: Type.String({ minLength: 1 }),
  type: HookType,
  async: Async,
  sequential: Sequential,
  deny: HookDeny,
  on_fail: Type.Optional(OutcomeWithDeny),
  on_success: Type.Optional(OutcomeWithDeny),
  checks: Type.Optional(Type.Array(HookCheckSchema)),
});

export const AfterRequestHookSchema = Closed({
  id: Type.String({ minLength: 1 }),
  type: HookType,
  async: Async,
  sequential: Sequential,
  deny: HookDeny,
  on_fail: Type.Optional(OutcomeWithDeny),
  on_success: Type.Optional(OutcomeWithDeny),
  checks: Type.Optional(Type.Array(HookCheckSchema)),
});

function Guardrail(outcome: typeof OutcomeWithDeny | typeof OutcomeFeedbackOnly) {
  return Type.Union([
    Type.String({ minLength: 1, description: 'Id of a stored guardrail.' }),
    Type.Object(
      {
        id: Type.Optional(Type.String()),
        type: HookType,
        deny: Type.Optional(Type.Boolean()),
        async: Async,
        sequential: Sequential,
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
