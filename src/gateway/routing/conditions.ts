/**
 * The query language of conditional routing: Mongo-like queries over the request's metadata, its body
 * (`params`) and its URL. A query is validated once, with the config, and compiled into a predicate that
 * is cached per query object; evaluating it is pure and never throws. The language is documented in
 * docs/conditions.md.
 */
import { GatewayError } from '../../core/errors.js';
import { compileLinearRegex, type LinearRegex } from '../../hooks/linear-regex.js';

export interface ConditionInput {
  /** The request metadata (flat string map). */
  metadata: Record<string, string>;
  /** The request body. */
  params: Record<string, unknown>;
  /** The request's path, without its query string (`/v1/chat/completions`). */
  url: string;
}

export type ConditionQuery = Record<string, unknown>;

type Predicate = (input: ConditionInput) => boolean;
type ValueTest = (value: unknown) => boolean;

/** Longest `$regex` pattern accepted, in characters. */
export const MAX_REGEX_LENGTH = 512;
/** Deepest nesting of `$and`/`$or`/`$not` accepted; keeps evaluation cheap and the stack shallow. */
export const MAX_QUERY_DEPTH = 32;

const LOGICAL_OPERATORS = new Set(['$and', '$or', '$not']);
const FIELD_OPERATORS = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$regex',
  '$options',
  '$exists',
  '$not',
]);
const REGEX_FLAGS = /^(?!.*(.).*\1)[imsu]*$/;
/** A string that writes a number in decimal: `42`, `-1.5`, `.5`, `1e3`; not `0x10`, ` 4` or ``. */
const DECIMAL_NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

const compiled = new WeakMap<object, Predicate>();
const NEVER: Predicate = () => false;

/**
 * Checks a condition query and compiles it (the compiled form is cached for `evaluateCondition`).
 * Throws `invalid_config` whose `param` names the offending place, rooted at `param`.
 */
export function validateConditionQuery(query: unknown, param: string): void {
  if (!isPlainObject(query)) throw invalid(param, 'must be an object');
  if (compiled.has(query) && compiled.get(query) !== NEVER) return;
  compiled.set(query, compileQuery(query, param, 0));
}

/**
 * Whether `input` satisfies `query`. Pure; never throws: a query that does not validate, or an input of
 * the wrong shape, evaluates to false.
 */
export function evaluateCondition(query: unknown, input: ConditionInput): boolean {
  if (!isPlainObject(query)) return false;
  let predicate = compiled.get(query);
  if (predicate === undefined) {
    try {
      predicate = compileQuery(query, 'query', 0);
    } catch {
      predicate = NEVER;
    }
    compiled.set(query, predicate);
  }
  try {
    return predicate(input) === true;
  } catch {
    return false;
  }
}

function compileQuery(query: Record<string, unknown>, param: string, depth: number): Predicate {
  if (depth > MAX_QUERY_DEPTH) throw invalid(param, `is nested more than ${MAX_QUERY_DEPTH} levels deep`);
  const parts: Predicate[] = [];
  for (const [key, operand] of Object.entries(query)) {
    if (key.startsWith('$')) {
      parts.push(compileLogical(key, operand, `${param}.${key}`, depth));
    } else {
      parts.push(compileField(key, operand, `${param}[${JSON.stringify(key)}]`, depth));
    }
  }
  return allOf(parts);
}

function compileLogical(operator: string, operand: unknown, param: string, depth: number): Predicate {
  if (operator === '$and' || operator === '$or') {
    if (!Array.isArray(operand) || operand.length === 0) {
      throw invalid(param, 'must be a non-empty array of queries');
    }
    const parts = operand.map((item, i) => {
      const itemParam = `${param}[${i}]`;
      if (!isPlainObject(item)) throw invalid(itemParam, 'must be a query object');
      return compileQuery(item, itemParam, depth + 1);
    });
    return operator === '$and' ? allOf(parts) : anyOf(parts);
  }
  if (operator === '$not') {
    if (!isPlainObject(operand)) throw invalid(param, 'must be a query object');
    const inner = compileQuery(operand, param, depth + 1);
    return (input) => !inner(input);
  }
  throw invalid(
    param,
    `is not a known operator (expected a path or one of ${[...LOGICAL_OPERATORS].join(', ')})`,
  );
}

function compileField(path: string, operand: unknown, param: string, depth: number): Predicate {
  const read = compilePath(path, param);
  const test = compileValueTest(operand, param, depth);
  return (input) => test(read(input));
}

/** `metadata.<key>`, `params.<a>.<b>.<0>…`, or `url` (also `url.pathname`, as Portkey names it). */
function compilePath(path: string, param: string): (input: ConditionInput) => unknown {
  if (path === 'url' || path === 'url.pathname')
    return (input) => (isObjectLike(input) ? ownValue(input, 'url') : undefined);
  const dot = path.indexOf('.');
  const root = dot === -1 ? path : path.slice(0, dot);
  const rest = dot === -1 ? '' : path.slice(dot + 1);
  if (root === 'metadata' && rest !== '') {
    // Metadata is a flat string map, so everything after the root is one key (which may contain dots).
    return (input) => {
      const metadata = isObjectLike(input) ? ownValue(input, 'metadata') : undefined;
      return isObjectLike(metadata) ? ownValue(metadata, rest) : undefined;
    };
  }
  if (root === 'params' && rest !== '') {
    const segments = rest.split('.');
    if (segments.some((s) => s === '')) throw invalid(param, 'has an empty path segment');
    return (input) => {
      let value: unknown = isObjectLike(input) ? ownValue(input, 'params') : undefined;
      for (const segment of segments) {
        if (!isObjectLike(value)) return undefined;
        value = ownValue(value, segment);
      }
      return value;
    };
  }
  throw invalid(param, "must be a path rooted at 'metadata.' or 'params.', or 'url' ('url.pathname')");
}

function compileValueTest(operand: unknown, param: string, depth: number): ValueTest {
  if (!isPlainObject(operand)) return equalsTest(operand);
  const keys = Object.keys(operand);
  const operatorKeys = keys.filter((k) => k.startsWith('$'));
  // An object without operators is a literal compared as a whole, as in Mongo.
  if (operatorKeys.length === 0) return equalsTest(operand);
  if (operatorKeys.length !== keys.length) {
    throw invalid(param, 'must not mix operators ($…) with plain keys');
  }
  return compileOperators(operand, param, depth);
}

function compileOperators(operators: Record<string, unknown>, param: string, depth: number): ValueTest {
  if (depth > MAX_QUERY_DEPTH) throw invalid(param, `is nested more than ${MAX_QUERY_DEPTH} levels deep`);
  const tests: ValueTest[] = [];
  if ('$options' in operators && !('$regex' in operators)) {
    throw invalid(`${param}.$options`, 'is only allowed together with $regex');
  }
  for (const [operator, operand] of Object.entries(operators)) {
    const at = `${param}.${operator}`;
    if (!FIELD_OPERATORS.has(operator)) {
      throw invalid(at, `is not a known operator (expected one of ${[...FIELD_OPERATORS].join(', ')})`);
    }
    switch (operator) {
      case '$eq':
        tests.push(equalsTest(operand));
        break;
      case '$ne': {
        const eq = equalsTest(operand);
        tests.push((value) => !eq(value));
        break;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        tests.push(comparisonTest(operator, operand, at));
        break;
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) throw invalid(at, 'must be an array');
        const members = operand.map((member) => equalsTest(member));
        const isIn: ValueTest = (value) => members.some((eq) => eq(value));
        tests.push(operator === '$in' ? isIn : (value) => !isIn(value));
        break;
      }
      case '$regex': {
        const regex = compileRegex(operand, operators.$options, param);
        tests.push((value) => typeof value === 'string' && regex.test(value));
        break;
      }
      case '$options':
        break; // read with $regex
      case '$exists': {
        if (typeof operand !== 'boolean') throw invalid(at, 'must be true or false');
        tests.push((value) => (value !== undefined) === operand);
        break;
      }
      case '$not': {
        if (!isPlainObject(operand) || Object.keys(operand).length === 0) {
          throw invalid(at, 'must be a non-empty operator object, e.g. {"$in": [...]}');
        }
        if (Object.keys(operand).some((k) => !k.startsWith('$'))) {
          throw invalid(at, 'must contain only operators ($…)');
        }
        const inner = compileOperators(operand, at, depth + 1);
        tests.push((value) => !inner(value));
        break;
      }
    }
  }
  return (value) => tests.every((test) => test(value));
}

function comparisonTest(operator: string, operand: unknown, param: string): ValueTest {
  const isNumber = typeof operand === 'number' && Number.isFinite(operand);
  if (!isNumber && typeof operand !== 'string') throw invalid(param, 'must be a number or a string');
  const accepts = (order: number): boolean => {
    if (operator === '$gt') return order > 0;
    if (operator === '$gte') return order >= 0;
    if (operator === '$lt') return order < 0;
    return order <= 0;
  };
  return (value) => {
    // Metadata values are strings, so a number is also compared with a string that writes one ("42"),
    // as Portkey compares them. Other mismatched types never match: "ten" is neither greater nor
    // smaller than 9, and "10" is no string operand's number.
    if (isNumber && typeof value === 'string' && DECIMAL_NUMBER.test(value)) value = Number(value);
    if (typeof value !== typeof operand) return false;
    if (typeof value === 'number' && Number.isNaN(value)) return false;
    const a = value as number | string;
    const b = operand as number | string;
    return accepts(a < b ? -1 : a > b ? 1 : 0);
  };
}

/**
 * `param` is the operator object's place; errors name its `$regex` or `$options`. Patterns come from
 * configs and run against request values, so they run on the linear-time engine: no pattern and no value
 * can stall the process, and a pattern it cannot run (lookaround, backreferences) is refused here.
 */
function compileRegex(pattern: unknown, options: unknown, param: string): LinearRegex {
  const at = `${param}.$regex`;
  if (typeof pattern !== 'string') throw invalid(at, 'must be a string');
  // A length bound keeps compilation cheap and the pattern reviewable; patterns come from configs.
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw invalid(at, `must be at most ${MAX_REGEX_LENGTH} characters long`);
  }
  const flags = options ?? '';
  if (typeof flags !== 'string' || !REGEX_FLAGS.test(flags)) {
    throw invalid(`${param}.$options`, "must be a string of distinct flags among 'i', 'm', 's', 'u'");
  }
  try {
    return compileLinearRegex(pattern, {
      ignoreCase: flags.includes('i'),
      multiline: flags.includes('m'),
      dotAll: flags.includes('s'),
    });
  } catch (error) {
    throw invalid(at, (error as Error).message);
  }
}

function equalsTest(expected: unknown): ValueTest {
  if (expected === null || typeof expected !== 'object') return (value) => value === expected;
  return (value) => deepEqual(value, expected);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  return aKeys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

function allOf(parts: Predicate[]): Predicate {
  if (parts.length === 1) return parts[0];
  return (input) => parts.every((part) => part(input));
}

function anyOf(parts: Predicate[]): Predicate {
  return (input) => parts.some((part) => part(input));
}

function isObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return isObjectLike(value) && !Array.isArray(value);
}

/** Own properties only: a path never reaches `__proto__`, `constructor` or array methods. */
function ownValue(container: Record<string, unknown>, key: string): unknown {
  if (Array.isArray(container) && !/^(0|[1-9]\d*)$/.test(key)) return undefined;
  return Object.hasOwn(container, key) ? container[key] : undefined;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_config', `${param} ${message}`, { param });
}
