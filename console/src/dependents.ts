/**
 * What a `409 conflict` of the management API names as depending on the change it refused. The gateway
 * names them in its message, in the form docs/management-api.md gives: `…: configs "support"
 * (config.targets[1].virtual_key); prompts "answer" (version 2); guardrails "polite"
 * (guardrail.default.modelJudge.virtual_key). Change them first, …`, each kind with at most a few
 * named and the rest counted (`and 3 more`). Where only one kind can depend on it, the message says which
 * before the list and the list names none: `…would make configs whose targets name it fail: "a" (…)`.
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
const GROUP = /^(?:(configs|prompts|guardrails) )?((?:"[^"]*" \([^)]*\)(?:, )?)+)(?: and (\d+) more)?$/;
const ITEM = /"([^"]*)" \(([^)]*)\)/g;
/** The kind a lead names before a list of one kind (`…would make configs whose…`), its slugs left out. */
const LEAD_KIND = /\b(configs|prompts|guardrails)\b/;

function kindOf(name: string | undefined, lead: string): Dependent['kind'] | undefined {
  const named = name ?? LEAD_KIND.exec(lead.replace(/"[^"]*"/g, ''))?.[1];
  return named === undefined ? undefined : KINDS[named as keyof typeof KINDS];
}

/** The refusal's parts, or undefined when the message does not name its dependents in that form. */
export function refusalOf(message: string): Refusal | undefined {
  const start = message.indexOf(': ');
  if (start < 0) return undefined;
  const end = message.indexOf('. ', start);
  const list = message.slice(start + 2, end < 0 ? message.length : end);
  const lead = message.slice(0, start + 1);
  const parts = list.split('; ');
  const dependents: Dependent[] = [];
  let more = 0;
  for (const part of parts) {
    const group = GROUP.exec(part);
    // A list that does not name its kind is a list of one kind.
    if (!group || (group[1] === undefined && parts.length > 1)) return undefined;
    const kind = kindOf(group[1], lead);
    if (!kind) return undefined;
    for (const [, slug, where] of group[2].matchAll(ITEM)) dependents.push({ kind, slug, where });
    more += Number(group[3] ?? 0);
  }
  return {
    lead,
    dependents,
    more,
    tail: end < 0 ? '' : message.slice(end + 2),
  };
}
