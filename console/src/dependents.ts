/**
 * What a `409 conflict` of the management API names as depending on the change it refused. The gateway
 * names them in its message, in the form docs/management-api.md gives: `…: configs "support"
 * (config.targets[1].virtual_key); prompts "answer" (version 2); guardrails "polite"
 * (guardrail.default.modelJudge.virtual_key). Change them first, …`, each kind with at most a few
 * named and the rest counted (`and 3 more`).
 */
export interface Dependent {
  kind: 'config' | 'prompt' | 'guardrail';
  slug: string;
  /** Where it names what was changed (`config.targets[1].virtual_key`), or its versions (`version 2`). */
  where: string;
}

export interface Refusal {
  /** The message up to the list: what was refused and why. */
  lead: string;
  dependents: Dependent[];
  /** How many more the gateway counted without naming them. */
  more: number;
  /** The message after the list: what to do. */
  tail: string;
}

const KINDS = { configs: 'config', prompts: 'prompt', guardrails: 'guardrail' } as const;
/** One kind's part of the list: `configs "a" (…), "b" (…) and 2 more`. Slugs hold no quote. */
const GROUP = /^(configs|prompts|guardrails) ((?:"[^"]*" \([^)]*\)(?:, )?)+)(?: and (\d+) more)?$/;
const ITEM = /"([^"]*)" \(([^)]*)\)/g;

/** The refusal's parts, or undefined when the message does not name its dependents in that form. */
export function refusalOf(message: string): Refusal | undefined {
  const start = message.indexOf(': ');
  if (start < 0) return undefined;
  const end = message.indexOf('. ', start);
  const list = message.slice(start + 2, end < 0 ? message.length : end);
  const dependents: Dependent[] = [];
  let more = 0;
  for (const part of list.split('; ')) {
    const group = GROUP.exec(part);
    if (!group) return undefined;
    const kind = KINDS[group[1] as keyof typeof KINDS];
    for (const [, slug, where] of group[2].matchAll(ITEM)) dependents.push({ kind, slug, where });
    more += Number(group[3] ?? 0);
  }
  return {
    lead: message.slice(0, start + 1),
    dependents,
    more,
    tail: end < 0 ? '' : message.slice(end + 2),
  };
}
