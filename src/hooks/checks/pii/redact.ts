/**
 * Replaces each PII value with a numbered placeholder: `[EMAIL_1]`, `[PHONE_2]`, `[CREDIT_CARD_1]` … The
 * number is per category and per value across the whole body, in order of first appearance, so the same
 * address is the same placeholder in every message and the model can still tell two people apart.
 */
import type { PiiCategory, PiiSpan } from './detectors.js';

export class Redactor {
  private readonly placeholders = new Map<string, string>();
  private readonly counters = new Map<PiiCategory, number>();

  redact(text: string, spans: readonly PiiSpan[]): string {
    if (spans.length === 0) return text;
    let out = '';
    let from = 0;
    for (const span of spans) {
      out +=
        text.slice(from, span.start) + this.placeholderOf(span.category, text.slice(span.start, span.end));
      from = span.end;
    }
    return out + text.slice(from);
  }

  private placeholderOf(category: PiiCategory, value: string): string {
    const key = `${category}\u0000${value}`;
    let placeholder = this.placeholders.get(key);
    if (placeholder === undefined) {
      const n = (this.counters.get(category) ?? 0) + 1;
      this.counters.set(category, n);
      placeholder = `[${category.toUpperCase()}_${n}]`;
      this.placeholders.set(key, placeholder);
    }
    return placeholder;
  }
}
