/**
 * The small members of a large JSON object (or elements of an array), read as its text goes by: a relayed
 * answer too large to be kept whole (an embeddings list of thousands of vectors) still has its `model` and
 * `usage` — usually after the large member, at the end — read without holding the rest; a long array of
 * streamed answers (Gemini's streamGenerateContent without `alt=sse`) keeps its answers. Each top-level
 * member is kept while its text stays within `maxMemberChars`, dropped beyond; `value()` parses what was
 * kept.
 */
export class JsonSkeleton {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The text of the top-level member being read; undefined when it grew too large to keep. */
  private member: string | undefined = '';
  private readonly members: string[] = [];
  private ended = false;
  private broken = false;
  private array = false;

  constructor(private readonly maxMemberChars: number) {}

  push(text: string): void {
    if (this.ended || this.broken) return;
    // The start of the current member's text within `text` (it may have begun in an earlier piece).
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const char = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (char === BACKSLASH) this.escaped = true;
        else if (char === QUOTE) this.inString = false;
        continue;
      }
      if (char === QUOTE) this.inString = true;
      else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
        this.depth += 1;
        if (this.depth === 1) {
          this.array = char === OPEN_BRACKET;
          from = i + 1;
        }
      } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
        this.depth -= 1;
        if (this.depth === 0) {
          this.endMember(text.slice(from, i));
          this.ended = true;
          return;
        }
        if (this.depth < 0) return this.break();
      } else if (char === COMMA && this.depth === 1) {
        this.endMember(text.slice(from, i));
        from = i + 1;
      }
    }
    if (this.depth >= 1) this.grow(text.slice(from));
  }

  /** The object (or array) of the kept members; undefined unless the whole of it went by. */
  value(): Record<string, unknown> | unknown[] | undefined {
    if (!this.ended || this.broken) return undefined;
    const kept = this.members.join(',');
    try {
      return JSON.parse(this.array ? `[${kept}]` : `{${kept}}`) as Record<string, unknown> | unknown[];
    } catch {
      return undefined;
    }
  }

  private grow(text: string): void {
    if (this.member === undefined) return;
    this.member = this.member.length + text.length > this.maxMemberChars ? undefined : this.member + text;
  }

  private endMember(text: string): void {
    this.grow(text);
    if (this.member !== undefined && this.member.trim() !== '') this.members.push(this.member);
    this.member = '';
  }

  private break(): void {
    this.broken = true;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
