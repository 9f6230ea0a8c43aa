import { expect } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';

/** Runs `fn`, asserting it throws a 400 GatewayError with `code` and `param`; returns the error. */
export function expectGatewayError(fn: () => unknown, code: string, param: string | null): GatewayError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a GatewayError to be thrown').toBeInstanceOf(GatewayError);
  const error = thrown as GatewayError;
  expect({ code: error.code, status: error.status, param: error.param }).toEqual({
    code,
    status: 400,
    param,
  });
  return error;
}
