/**
 * Context windows of well-known model families, in tokens, for `truncation` (docs/responses.md): the
 * first entry whose key the model id contains wins, so specific names come before their family's. A model
 * the table does not know is not checked. Input size is estimated at four characters a token, the rule the
 * rate limiter's reservations use too.
 */
const CONTEXT_WINDOWS: ReadonlyArray<readonly [string, number]> = [
  ['gpt-4.1', 1_047_576],
  ['gpt-5', 400_000],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-3.5-turbo', 16_385],
  ['o1-mini', 128_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['claude', 200_000],
  ['gemini', 1_048_576],
  ['command-a', 256_000],
  ['command-r', 128_000],
  ['mistral-large', 128_000],
  ['llama-3', 128_000],
  ['deepseek', 128_000],
];

const CHARACTERS_PER_TOKEN = 4;

/** The window of a model: the setting's entries (GATEWAY_CONTEXT_WINDOWS) first, then the table's. */
export function contextWindowOf(
  model: string,
  overrides: Readonly<Record<string, number>> = {},
): number | undefined {
  const id = model.toLowerCase();
  for (const [key, tokens] of Object.entries(overrides)) if (id.includes(key.toLowerCase())) return tokens;
  return CONTEXT_WINDOWS.find(([key]) => id.includes(key))?.[1];
}

/** The estimated tokens of a request's messages (their JSON text). */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / CHARACTERS_PER_TOKEN);
}
