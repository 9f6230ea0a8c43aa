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

/** PostgreSQL's classes of a moment's failure: the connection (08), a transaction rolled back for another
 * (40: a serialization failure, a deadlock), resources (53), the server stopping or a statement cut (57),
 * its system (58: I/O). */
const PASSING_SQLSTATE = /^(08|40|53|57|58)[0-9A-Z]{3}$|^55P03$/;
/** The errors of a connection to the database server that broke or could not be made. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** pg's own errors of a connection, which carry no code. */
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout)/;

/**
 * The database failed for the moment, not for what was asked: the connection dropped or could not be made,
 * the server is stopping or out of resources, a lock was not had in time (SQLite's busy or locked file, an
 * I/O error). The same read or write may well succeed a little later. A refused value (isRefusedValue)
 * never is one; nor is anything that is no driver's or connection's error (a fault of the gateway's).
 */
export function isTransientStoreError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || error instanceof GatewayError) return false;
  if (isRefusedValue(error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (PASSING_SQLSTATE.test(code) || NETWORK_CODES.has(code)) return true;
    return /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|NOMEM|INTERRUPT)/.test(code);
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message);
}
