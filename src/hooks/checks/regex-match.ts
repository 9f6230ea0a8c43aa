/**
 * `default.regexMatch` {rule}: passes when the rule matches somewhere in the text (anchor it with ^…$ to
 * match the whole text; write `(?i)` at its start to ignore case).
 *
 * Rules come from configs, so they run on the linear-time engine (linear-regex.ts): a rule that would
 * backtrack catastrophically in JavaScript runs in time proportional to the text here, and a rule using
 * lookaround or backreferences is refused at config validation. `data` tells where the first match is,
 * not what it is: a rule that hunts secrets must not copy them into results and logs.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';
import { compileLinearRegex, linearRegexProblem } from '../linear-regex.js';

export const regexMatch = defineCheck({
  id: 'regexMatch',
  parameters: Type.Object({ rule: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  refine({ rule }) {
    const problem = linearRegexProblem(rule);
    return problem === null ? null : { param: 'parameters.rule', message: problem };
  },
  run(ctx, { rule }) {
    const match = compileLinearRegex(rule).first(checkedText(ctx));
    return {
      verdict: match !== null,
      explanation: match !== null ? 'The rule matches the text.' : 'The rule does not match the text.',
      data: { rule, match },
    };
  },
});
