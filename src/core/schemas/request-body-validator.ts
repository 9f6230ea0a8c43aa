/**
 * What the chat, text-completion and embedding request bodies check alike: how a failed body is
 * reported, and the rules of the fields they share that tie one field to another.
 */
import type { TSchema } from '@sinclair/typebox';
import { compileValidator, fieldError, type SchemaValidator } from '../validator/compile-validator.js';

/** A request body's validator: `invalid_body` errors with paths from the body's root. */
export function compileRequestBodyValidator<T extends TSchema>(schema: T): SchemaValidator<T> {
  return compileValidator(schema, {
    code: 'invalid_body',
    rootPath: '',
    subject: 'The request body',
    rootParam: null,
  });
}

/** `stream_options` only mean something for a streamed answer. */
export function checkStreamOptionsRule(request: { stream?: boolean | null; stream_options?: unknown }): void {
  if (request.stream_options != null && request.stream !== true) {
    throw fieldError('invalid_body', 'stream_options', 'is only allowed when stream is true');
  }
}
