/**
 * Reads a batch's input file line by line, as a stream: each line is checked the way OpenAI's batch API
 * checks it (JSON, a unique `custom_id` without U+0000, `method: POST`, the batch's `url`, a body valid for the
 * endpoint and nested no deeper than a request sent directly, no streaming), and yields the lines to run
 * or the errors to report with their line numbers (1-based, counting every line of the file; blank lines
 * are skipped). Lines are split, and taken for blank, by the rule of jsonl-lines.ts (jsonlRequestLines), the
 * one the upload counted and checked them by.
 */
import type { Readable } from 'node:stream';
import { assertBodyDepth } from '../../core/body-depth.js';
import { GatewayError } from '../../core/errors.js';
import type { BatchLineError, NewBatchLine } from '../../store/file-batch-types.js';
import { catalogModel } from '../config/index.js';
import type { EndpointDescriptor } from '../endpoints.js';
import { jsonlRequestLines, LineTooLong } from './jsonl-lines.js';

/** `errors.data` keeps the first this many; the count goes on. */
export const MAX_REPORTED_ERRORS = 1_000;

export interface InputLimits {
  maxLines: number;
  /** Bytes a line may hold: a request body's bound (GATEWAY_BODY_LIMIT_BYTES). */
  maxLineBytes: number;
}

/** What the batch's creating request left to its lines. */
export interface InputRules {
  /** The request named no provider: each line's body `model` must name its catalog provider. */
  modelNamesProvider: boolean;
}

export type InputItem = { line: NewBatchLine } | { error: BatchLineError };

function lineError(line: number, code: string, message: string, param: string | null): InputItem {
  return { error: { code, message, param, line } };
}

function checkLine(
  text: string,
  number: number,
  endpointPath: string,
  endpoint: EndpointDescriptor,
  seen: Set<string>,
  rules: InputRules,
): InputItem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return lineError(number, 'invalid_json_line', `Line ${number} is not valid JSON`, null);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return lineError(number, 'invalid_request', `Line ${number} is not a JSON object`, null);
  }
  const request = parsed as Record<string, unknown>;
  const customId = request.custom_id;
  if (typeof customId !== 'string' || customId.length === 0) {
    return lineError(
      number,
      'missing_required_parameter',
      'custom_id must be a non-empty string',
      'custom_id',
    );
  }
  if (customId.includes('\u0000')) {
    // Stored with the line, and PostgreSQL cannot keep U+0000 in text: refused on every store alike.
    return lineError(number, 'invalid_request', 'custom_id cannot hold U+0000', 'custom_id');
  }
  if (seen.has(customId)) {
    return lineError(
      number,
      'duplicate_custom_id',
      `custom_id "${customId}" appears more than once`,
      'custom_id',
    );
  }
  seen.add(customId);
  if (request.method !== 'POST') {
    return lineError(number, 'invalid_method', 'method must be "POST"', 'method');
  }
  if (request.url !== endpointPath) {
    return lineError(
      number,
      'mismatched_endpoint',
      `url must be the batch's endpoint, ${endpointPath}`,
      'url',
    );
  }
  const body = request.body;
  if (typeof body === 'object' && body !== null && (body as Record<string, unknown>).stream === true) {
    return lineError(number, 'unsupported_parameter', 'A batch line cannot stream', 'body.stream');
  }
  try {
    // Before anything walks the body recursively (validation, and its text stored for the worker).
    assertBodyDepth(body);
    endpoint.validate(body);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const param = err.param ? `body.${err.param}` : 'body';
    return lineError(number, err.code, err.message, param);
  }
  if (rules.modelNamesProvider && catalogModel((body as Record<string, unknown>).model) === undefined) {
    return lineError(
      number,
      'missing_provider',
      'The batch was created without a provider: the model must name a catalog provider ' +
        '(@<provider_slug>/<model>)',
      'body.model',
    );
  }
  return { line: { line: number, custom_id: customId, body: JSON.stringify(body) } };
}

/** The input's lines, checked, in file order; then (at most once) an error for too many lines. */
export async function* readBatchInput(
  input: Readable,
  endpointPath: string,
  endpoint: EndpointDescriptor,
  limits: InputLimits,
  rules: InputRules = { modelNamesProvider: false },
): AsyncGenerator<InputItem> {
  const seen = new Set<string>();
  let requests = 0;
  try {
    for await (const { number, bytes } of jsonlRequestLines(input, limits.maxLineBytes)) {
      requests += 1;
      if (requests > limits.maxLines) {
        yield lineError(
          number,
          'too_many_requests',
          `A batch holds at most ${limits.maxLines} requests`,
          null,
        );
        return;
      }
      yield checkLine(bytes.toString('utf8'), number, endpointPath, endpoint, seen, rules);
    }
  } catch (err) {
    // The upload refuses such a line; one uploaded under a larger bound is not read past this one.
    if (!(err instanceof LineTooLong)) throw err;
    yield lineError(
      err.line,
      'line_too_long',
      `Line ${err.line} is longer than ${err.maxBytes} bytes, the largest request body`,
      null,
    );
    return;
  } finally {
    input.destroy();
  }
  if (requests === 0) {
    yield {
      error: { code: 'empty_file', message: 'The input file has no requests', param: null, line: null },
    };
  }
}
