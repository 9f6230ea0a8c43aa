/** What the store's callers tell apart in a driver's error: a value refused, or a moment's failure. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { isRefusedValue, isTransientStoreError } from '../../src/store/db-errors.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isTransientStoreError', () => {
  it('knows a connection that dropped or could not be made, and a server that is stopping or busy', () => {
    for (const error of [
      withCode('ECONNRESET'),
      withCode('ECONNREFUSED'),
      withCode('08006'),
      withCode('57P01'),
      withCode('40001'),
      withCode('53300'),
      withCode('SQLITE_BUSY'),
      withCode('SQLITE_IOERR_WRITE'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(isTransientStoreError(error), String((error as { code?: string }).code ?? error.message)).toBe(
        true,
      );
    }
  });

  it('is never a refused value, a fault of the gateway, nor its own error', () => {
    for (const error of [
      withCode('23505'),
      withCode('22021'),
      withCode('SQLITE_CONSTRAINT_UNIQUE'),
      withCode('42P01'),
      new TypeError("Cannot read properties of undefined (reading 'choices')"),
      new GatewayError('internal_error', 'The gateway failed to handle the request'),
      'ECONNRESET',
      undefined,
    ]) {
      expect(isTransientStoreError(error)).toBe(false);
    }
    expect(isRefusedValue(withCode('23505'))).toBe(true);
  });
});
