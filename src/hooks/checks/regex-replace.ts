/**
 * `default.regexReplace` {rule, redactText, failOnDetection}: a mutator that replaces every match of the rule
 * with `redactText` (default `[REDACTED]`) in every text of the body (text.ts: every message, prompt or
 * choice, as `default.pii` rewrites), and passes; with `failOnDetection` a body that held a match fails, its
 * rewrite applied all the same, as the reference gateway does.
 *
 * The rule is written as the reference gateway's is: a pattern, or `/pattern/flags` (`i`, `m`, `s` are
 * honoured; `g`, `u`, `y`, `d` change nothing here, since every match is replaced). It runs on the
 * linear-time engine (linear-regex.ts) like `regexMatch` rules. `redactText` goes in as written: `$1` or
 * `$&` in it are not group references, so a replacement never copies what it replaces. Both differ from
 * the reference gateway, which replaces the first match only unless the rule is written `/…/g`, and reads
 * `$1`, `$&` and the like in `redactText` as references to the match (String.prototype.replace);
 * docs/guardrails.md says so. Empty matches are left alone: a rule such as `x*` must not put the
 * replacement between every character.
 */
import { Type } from '@sinclair/typebox';
import { checkedSubject, defineCheck } from '../built-in-check.js';
import type { CheckContext } from '../check-types.js';
import { compileLinearRegex, linearRegexProblem, type LinearRegex } from '../linear-regex.js';
import { mapAnswerTexts, mapRequestTexts } from '../text.js';

type Json = Record<string, unknown>;

const DEFAULT_REPLACEMENT = '[REDACTED]';

/** `/pattern/flags`, as the reference gateway reads a rule written that way. */
const SLASHED = /^\/(.+)\/([gimsuyd]*)$/;

/** The pattern in the engine's syntax: `/…/flags` unwrapped, its `i`, `m` and `s` as inline flags. */
function patternOf(rule: string): string {
  const slashed = SLASHED.exec(rule);
  if (slashed === null) return rule;
  const inline = [...new Set(slashed[2]!)].filter((flag) => 'ims'.includes(flag)).join('');
  return inline === '' ? slashed[1]! : `(?${inline})${slashed[1]!}`;
}

function replaceAll(regex: LinearRegex, text: string, replacement: string): { text: string; count: number } {
  let out = '';
  let from = 0;
  let count = 0;
  for (const match of regex.matches(text)) {
    if (match.text === '') continue;
    out += text.slice(from, match.index) + replacement;
    from = match.index + match.text.length;
    count++;
  }
  return count === 0 ? { text, count } : { text: out + text.slice(from), count };
}

function rewrite(ctx: CheckContext, fn: (text: string) => string): Json {
  return ctx.event === 'afterRequestHook'
    ? mapAnswerTexts(ctx.requestType, ctx.response?.json ?? {}, fn)
    : mapRequestTexts(ctx.requestType, ctx.request.json, fn);
}

export const regexReplace = defineCheck({
  id: 'regexReplace',
  parameters: Type.Object(
    {
      rule: Type.String({ minLength: 1 }),
      redactText: Type.Optional(Type.String()),
      failOnDetection: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  refine({ rule }) {
    const problem = linearRegexProblem(patternOf(rule));
    return problem === null ? null : { param: 'parameters.rule', message: problem };
  },
  rewrites: () => true,
  run(ctx, { rule, redactText, failOnDetection }) {
    const regex = compileLinearRegex(patternOf(rule));
    // Portkey reads an empty redactText as unset.
    const replacement = redactText === undefined || redactText === '' ? DEFAULT_REPLACEMENT : redactText;
    let replaced = 0;
    const transformed = rewrite(ctx, (text) => {
      const result = replaceAll(regex, text, replacement);
      replaced += result.count;
      return result.text;
    });
    const subject = checkedSubject(ctx);
    if (replaced === 0) {
      return { verdict: true, explanation: `The rule does not match ${subject}.`, data: { rule, replaced } };
    }
    const verdict = failOnDetection !== true;
    return {
      verdict,
      explanation: `The rule matched ${subject} ${replaced} time(s); each match was replaced${verdict ? '' : ', and failOnDetection fails the check'}.`,
      data: { rule, replaced },
      transformed,
    };
  },
});
