// Reads the text the fake answers from out of an OpenAI-shaped request, and counts "tokens" the way a
// test can predict: one token per whitespace-separated word.

type Part = { type?: string; text?: string };
type Message = { role?: string; content?: string | Part[] | null };

function contentText(content: Message['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter((p) => typeof p?.text === 'string')
      .map((p) => p.text)
      .join(' ');
  }
  return '';
}

export function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m?.role === 'user') return contentText(m.content);
  }
  return '';
}

export function allMessagesText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  return messages.map((m: Message) => contentText(m?.content)).join(' ');
}

export function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt)) return prompt.map((p) => (Array.isArray(p) ? p.join(' ') : String(p))).join(' ');
  return '';
}

export function countTokens(text: string): number {
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.max(1, words);
}

/**
 * Splits the reply into stream pieces that concatenate back to the streamed text: one per word, or
 * exactly `count`. With more chunks than words, filler words (` 1`, ` 2`, …) are appended, so the
 * streamed text is then the reply followed by the fillers.
 */
export function splitIntoPieces(text: string, count?: number): string[] {
  const words = text.match(/\s*\S+\s*$|\s*\S+/g) ?? [];
  if (count === undefined) return words.length > 0 ? words : [text];
  if (count <= 0) return [];
  if (count >= words.length) {
    const pieces = [...words];
    for (let i = pieces.length; i < count; i++) pieces.push(` ${i + 1}`);
    return pieces;
  }
  // Fewer chunks than words: spread the words evenly over the chunks.
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * words.length) / count);
    const to = Math.floor(((i + 1) * words.length) / count);
    pieces.push(words.slice(from, to).join(''));
  }
  return pieces;
}
