/** Recognises errors of either driver by kind: constraint violations (a 409, not a 500), refused values. */
import { GatewayError } from '../core/errors.js';

export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // pg: SQLSTATE 23505; better-sqlite3: extended result code names.
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * The database refused the values written, not the connection or the moment: writing the same values
 * again fails the same way. PostgreSQL's data exceptions (class 22: U+0000 in text, a number out of range),
 * integrity violations (class 23) and limits exceeded (class 54: an index entry past its size), as the
 * store reports them (postgres-text-refusal.ts turns U+0000
 * into the client's 400); SQLite's constraint, type and size refusals.
 */
export function isRefusedValue(error: unknown): boolean {
  if (error instanceof GatewayError) return error.status >= 400 && error.status < 500;
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (/^(2[23]|54)[0-9A-Z]{3}$/.test(code)) return true;
  return (
    code.startsWith('SQLITE_CONSTRAINT') ||
    code === 'SQLITE_MISMATCH' ||
    code === 'SQLITE_TOOBIG' ||
    code === 'SQLITE_RANGE'
  );
}
