/**
 * The content parts of a Responses input message, as OpenAI's document gives them (`InputImageContent`,
 * `InputFileContent` and their request variants), and the rule a schema cannot say: an image is sent by
 * `image_url` or `file_id`, a file by `file_id`, `file_url` or `file_data`.
 */
import { Type } from '@sinclair/typebox';
import { fieldError } from '../validator/compile-validator.js';
import { withErrorMessage } from '../validator/explain-error.js';
import { Nullable } from './common-fields.js';

/** Each letter either case: a URL's scheme is case-insensitive (RFC 3986), and so is a media type. */
const caseless = (word: string) =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');

/**
 * An http(s) URL with a host, or an image's base64 data URL (`data:image/png;base64,…`), which is what
 * OpenAI takes ("a fully qualified URL or base64 encoded image in a data URL"). Only the start is matched:
 * a data URL may be megabytes long.
 */
const IMAGE_URL_PATTERN =
  `^(?:${caseless('http')}[sS]?://[^\\s/?#]|` +
  `${caseless('data:image/')}[A-Za-z0-9.+-]+(?:;[^;,]+)*;${caseless('base64')},[A-Za-z0-9+/=])`;

/** An absolute URL (`https://…`; Gemini reads `gs://`): its scheme, then something. */
const ABSOLUTE_URL_PATTERN = '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]';

export const InputImagePart = Type.Object({
  type: Type.Literal('input_image'),
  image_url: Type.Optional(
    Nullable(
      withErrorMessage(
        Type.String({ pattern: IMAGE_URL_PATTERN }),
        'must be an http(s) URL or a data: URL of an image, base64 (data:image/png;base64,…)',
      ),
    ),
  ),
  file_id: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  detail: Type.Optional(
    Nullable(
      Type.Union([Type.Literal('low'), Type.Literal('high'), Type.Literal('auto'), Type.Literal('original')]),
    ),
  ),
});

export const InputFilePart = Type.Object({
  type: Type.Literal('input_file'),
  file_id: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  file_data: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  /** Never fetched by the gateway: sent to a provider that fetches files itself (docs/responses.md). */
  file_url: Type.Optional(
    Nullable(
      withErrorMessage(Type.String({ pattern: ABSOLUTE_URL_PATTERN }), 'must be an absolute URL (https://…)'),
    ),
  ),
  filename: Type.Optional(Nullable(Type.String())),
  detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
});

interface MediaPart {
  type: string;
  image_url?: string | null;
  file_id?: string | null;
  file_url?: string | null;
  file_data?: string | null;
}

/** An image or a file part that names nothing to send; `path` is the part's (`input[2].content[1]`). */
export function checkMediaPart(part: MediaPart, path: string): void {
  if (part.type === 'input_image' && part.image_url == null && part.file_id == null) {
    throw fieldError('invalid_body', path, 'is an input_image without an image: give image_url or file_id');
  }
  if (part.type === 'input_file' && part.file_id == null && part.file_url == null && part.file_data == null) {
    throw fieldError(
      'invalid_body',
      path,
      'is an input_file without a file: give file_id, file_url or file_data',
    );
  }
}
