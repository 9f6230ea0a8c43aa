/**
 * Context windows of well-known model families, in tokens, for `truncation` (docs/responses.md): the
 * first entry whose key the model id contains wins, so specific names come before their family's. A model
 * the table does not know is not checked. Input size is estimated at four characters a token, the rule the
 * rate limiter's reservations use too, and media at what the model reads of them.
 */
import { DOCUMENT_PAGE_TOKENS, IMAGE_TOKENS, pdfPages } from '../messages/estimate-input-tokens.js';

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

/**
 * The estimated tokens of a request's messages: their JSON text, but for the media sent in them, which the
 * model does not read as text: an image (chat's `image_url`, an `input_image`) counts as one image, an
 * inline PDF (`file_data`) as its pages, another inline file as its decoded text; never their base64.
 */
export function estimateTokens(value: unknown): number {
  let media = 0;
  const text = JSON.stringify(value, (_key, part: unknown) => {
    if (typeof part !== 'object' || part === null || Array.isArray(part)) return part;
    const { type, file, file_data: inline } = part as { type?: unknown; file?: unknown; file_data?: unknown };
    if (type === 'image_url' || type === 'input_image') {
      media += IMAGE_TOKENS;
      return { type };
    }
    if (type === 'file' || type === 'input_file') {
      media += fileTokens(
        type === 'file' ? (file as { file_data?: unknown } | undefined)?.file_data : inline,
      );
      return { type };
    }
    return part;
  });
  return Math.ceil(text.length / CHARACTERS_PER_TOKEN) + media;
}

/** A file: a PDF's pages, another file's decoded text; one page when it is sent by id. */
function fileTokens(fileData: unknown): number {
  const inline = typeof fileData === 'string' ? /^data:([^;,]*)[^,]*,(.*)$/s.exec(fileData) : null;
  if (!inline) return DOCUMENT_PAGE_TOKENS;
  const [, mediaType, base64 = ''] = inline;
  if (mediaType === 'application/pdf') return pdfPages(base64) * DOCUMENT_PAGE_TOKENS;
  return Math.ceil((base64.length * 3) / 4 / CHARACTERS_PER_TOKEN);
}
