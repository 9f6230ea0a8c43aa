/** Turns command-line strings into API values, with errors that name the option. */
import { InvalidArgumentError } from 'commander';
import { CliError } from './api-client.js';

/** `key=value`, repeatable, into an object (metadata). */
export function collectPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected key=value, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** `key=value` where value is JSON when it parses as JSON (objects, arrays, numbers) and text otherwise. */
export function collectSetting(
  value: string,
  previous: Record<string, unknown> = {},
): Record<string, unknown> {
  const pairs = collectPair(value);
  const [key, raw] = Object.entries(pairs)[0];
  let parsed: unknown = raw;
  if (/^[[{]/.test(raw.trim())) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new InvalidArgumentError(`the value of ${key} looks like JSON but does not parse`);
    }
  }
  return { ...previous, [key]: parsed };
}

export function parseInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError(`expected an integer, got "${value}"`);
  return parsed;
}

/** Used inside actions (not as an option parser), so its errors are reported like API errors. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`${what} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
