/**
 * `default.pii` {categories, redact}: finds personal data (pii/detectors.ts says what is recognised) in every
 * text of the body (every message and tool call of a request, every choice of an answer: text.ts), not
 * only the last message.
 *
 * Without `redact` the check fails when anything is found. With `redact: true` it is a mutator: it returns
 * the body with each value replaced by its placeholder (pii/redact.ts) as `transformed`, and passes; the
 * engine sends that body on instead of the original. `data` counts what was found per category and never
 * holds a value.
 */
import { Type } from '@sinclair/typebox';
import { checkedSubject, defineCheck } from '../built-in-check.js';
import type { CheckContext } from '../check-types.js';
import {
  allAnswerTexts,
  allRequestTexts,
  mapAnswerTexts,
  mapRequestTexts,
  type TextRewrite,
} from '../text.js';
import { PII_CATEGORIES, detectPii, type PiiCategory } from './pii/detectors.js';
import { Redactor } from './pii/redact.js';

type Json = Record<string, unknown>;

function bodyOf(ctx: CheckContext): Json {
  return ctx.event === 'afterRequestHook' ? (ctx.response?.json ?? {}) : ctx.request.json;
}

function textsOf(ctx: CheckContext): string[] {
  const body = bodyOf(ctx);
  return ctx.event === 'afterRequestHook'
    ? allAnswerTexts(ctx.requestType, body)
    : allRequestTexts(ctx.requestType, body);
}

function rewrite(ctx: CheckContext, fn: TextRewrite): Json {
  const body = bodyOf(ctx);
  return ctx.event === 'afterRequestHook'
    ? mapAnswerTexts(ctx.requestType, body, fn)
    : mapRequestTexts(ctx.requestType, body, fn);
}

export const pii = defineCheck({
  id: 'pii',
  parameters: Type.Object(
    {
      categories: Type.Optional(
        Type.Array(Type.Union(PII_CATEGORIES.map((category) => Type.Literal(category))), { minItems: 1 }),
      ),
      redact: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  rewrites: (parameters) => parameters.redact === true,
  run(ctx, parameters) {
    const categories = new Set<PiiCategory>(parameters.categories ?? PII_CATEGORIES);
    const found: Partial<Record<PiiCategory, number>> = {};
    let total = 0;
    for (const text of textsOf(ctx)) {
      for (const span of detectPii(text, categories)) {
        found[span.category] = (found[span.category] ?? 0) + 1;
        total++;
      }
    }
    const subject = checkedSubject(ctx);
    if (total === 0) return { verdict: true, explanation: `No PII found in ${subject}.`, data: { found } };
    const summary = Object.entries(found)
      .map(([category, count]) => `${count} ${category}`)
      .join(', ');
    if (parameters.redact !== true) {
      return { verdict: false, explanation: `PII found in ${subject}: ${summary}.`, data: { found } };
    }
    const redactor = new Redactor();
    const transformed = rewrite(ctx, (text) => redactor.redact(text, detectPii(text, categories)));
    return {
      verdict: true,
      explanation: `PII redacted from ${subject}: ${summary}.`,
      data: { found, redacted: true },
      transformed,
    };
  },
});
