/**
 * The claim rules of `default.jwt`, run once the token's signature and times hold: `requiredClaims`,
 * `claimValues` and `headerPayloadMatch`, with the reference gateway's meanings, so a check written for it
 * gives the same verdicts here.
 *
 * A claim's value is compared as a list of strings: an array's items, a string as one item (the `scope`
 * claim split at whitespace, as OAuth writes scopes), anything else as its string. `exact` wants one value
 * equal to one expected value; `contains` any expected value inside any value (as a substring); `containsAll`
 * every expected value inside some value; `regex` any pattern matching any value somewhere. Patterns come
 * from configs, so they run on the linear-time engine and are checked with the config.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ParameterRuleBreak } from '../built-in-check.js';
import { compileLinearRegex, linearRegexProblem } from '../linear-regex.js';

const ClaimScalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const MATCH_TYPES = ['exact', 'contains', 'containsAll', 'regex'] as const;
type MatchType = (typeof MATCH_TYPES)[number];

export const ClaimValuesSchema = Type.Record(
  Type.String(),
  Type.Object(
    {
      values: Type.Union([ClaimScalar, Type.Array(ClaimScalar)]),
      matchType: Type.Optional(Type.Union(MATCH_TYPES.map((m) => Type.Literal(m)))),
    },
    { additionalProperties: false },
  ),
);

export type ClaimValues = Static<typeof ClaimValuesSchema>;

export interface ClaimRules {
  requiredClaims?: string[];
  claimValues?: ClaimValues;
  headerPayloadMatch?: string[];
}

/** One rule's outcome, as the reference gateway reports it in `data.validations`. */
interface RuleOutcome {
  valid: boolean;
  missing?: string[];
  failed?: string[];
  mismatched?: string[];
}

export interface ClaimVerdict {
  /** What failed, one phrase per rule, in the reference gateway's words; empty when all hold. */
  failures: string[];
  validations: { requiredClaims?: RuleOutcome; claimValues?: RuleOutcome; headerPayloadMatch?: RuleOutcome };
}

/** A `regex` pattern of `claimValues` the linear-time engine cannot run, named by its claim. */
export function claimValuesRuleBreak(claimValues: ClaimValues | undefined): ParameterRuleBreak | null {
  for (const [claim, rule] of Object.entries(claimValues ?? {})) {
    if (rule.matchType !== 'regex') continue;
    for (const pattern of expected(rule.values)) {
      const problem = linearRegexProblem(pattern);
      if (problem !== null) return { param: `parameters.claimValues.${claim}.values`, message: problem };
    }
  }
  return null;
}

export function judgeClaims(
  rules: ClaimRules,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): ClaimVerdict {
  const verdict: ClaimVerdict = { failures: [], validations: {} };
  if (rules.requiredClaims !== undefined) {
    const missing = rules.requiredClaims.filter((claim) => !present(payload, claim));
    verdict.validations.requiredClaims = outcome('missing', missing);
    if (missing.length > 0) verdict.failures.push(`Missing required claims: ${missing.join(', ')}`);
  }
  if (rules.claimValues !== undefined) {
    const failed: string[] = [];
    for (const [claim, rule] of Object.entries(rules.claimValues)) {
      if (!present(payload, claim)) failed.push(`${claim} (missing)`);
      else if (!matches(asValues(payload[claim], claim), expected(rule.values), rule.matchType ?? 'exact')) {
        failed.push(claim);
      }
    }
    verdict.validations.claimValues = outcome('failed', failed);
    if (failed.length > 0) verdict.failures.push(`Invalid claim values: ${failed.join(', ')}`);
  }
  if (rules.headerPayloadMatch !== undefined) {
    const mismatched = rules.headerPayloadMatch.filter((key) => header[key] !== payload[key]);
    verdict.validations.headerPayloadMatch = outcome('mismatched', mismatched);
    if (mismatched.length > 0) verdict.failures.push(`Header-payload mismatch: ${mismatched.join(', ')}`);
  }
  return verdict;
}

function present(payload: Record<string, unknown>, claim: string): boolean {
  return Object.hasOwn(payload, claim) && payload[claim] !== undefined && payload[claim] !== null;
}

function outcome(field: 'missing' | 'failed' | 'mismatched', names: string[]): RuleOutcome {
  return names.length === 0 ? { valid: true } : { valid: false, [field]: names };
}

function expected(values: ClaimValues[string]['values']): string[] {
  return (Array.isArray(values) ? values : [values]).map(String);
}

function asValues(value: unknown, claim: string): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string') {
    return claim.toLowerCase() === 'scope' ? value.split(/\s+/).filter((v) => v !== '') : [value];
  }
  return [String(value)];
}

function matches(values: string[], wanted: string[], matchType: MatchType): boolean {
  switch (matchType) {
    case 'exact':
      return values.length === 1 && wanted.length === 1 && values[0] === wanted[0];
    case 'contains':
      return wanted.some((w) => values.some((v) => v.includes(w)));
    case 'containsAll':
      return wanted.every((w) => values.some((v) => v.includes(w)));
    case 'regex':
      return wanted.some((pattern) => {
        const regex = compileLinearRegex(pattern);
        return values.some((v) => regex.test(v));
      });
  }
}
