/**
 * Every built-in check by id, and the validation of a check as a config names it.
 *
 * Ids: a config names a built-in check `default.<id>` (`default.contains`), as the seed's users write it;
 * the bare id (`contains`) is accepted too and means the same check, since no other namespace of checks
 * exists here. Ids are case-sensitive (`default.allUppercase` is unknown; the problem says which id was
 * meant), but for the reference gateway's other spellings of an id (ALIASES). Any other namespace (`portkey.pii`, `acme.x`) is an unknown check.
 *
 * Parameters: each check's TypeBox schema, closed (unknown keys refused), plus `not` (a boolean, applied by
 * the engine) on every check; then the rules a schema cannot say (`BuiltInCheck.refine`).
 */
import { GatewayError } from '../core/errors.js';
import { compileValidator, type SchemaValidator } from '../core/validator/compile-validator.js';
import type { BuiltInCheck } from './built-in-check.js';
import { ADDRESS_ANNOTATION } from './checks/outbound-call.js';
import type { HookEvent } from './check-types.js';
import { addPrefix } from './checks/add-prefix.js';
import { allLowercase } from './checks/all-lowercase.js';
import { allUppercase } from './checks/all-uppercase.js';
import { allowedRequestTypes } from './checks/allowed-request-types.js';
import { characterCount } from './checks/character-count.js';
import { containsCode } from './checks/contains-code.js';
import { contains } from './checks/contains.js';
import { endpointReachability } from './checks/endpoint-reachability.js';
import { endsWith } from './checks/ends-with.js';
import { injectTools } from './checks/inject-tools.js';
import { jsonKeys } from './checks/json-keys.js';
import { jsonSchema } from './checks/json-schema.js';
import { jwt } from './checks/jwt.js';
import { log } from './checks/log.js';
import { metadata } from './checks/metadata.js';
import { modelJudge } from './checks/model-judge.js';
import { modelRules } from './checks/model-rules.js';
import { modelWhitelist } from './checks/model-whitelist.js';
import { pii } from './checks/pii.js';
import { regexMatch } from './checks/regex-match.js';
import { regexReplace } from './checks/regex-replace.js';
import { requiredMetadataKeys } from './checks/required-metadata-keys.js';
import { sentenceCount } from './checks/sentence-count.js';
import { validNumberRange } from './checks/valid-number-range.js';
import { validUrls } from './checks/valid-urls.js';
import { webhook } from './checks/webhook.js';
import { wordCount } from './checks/word-count.js';

export const CHECK_NAMESPACE = 'default';

const ALL: readonly BuiltInCheck[] = [
  addPrefix,
  allLowercase,
  allUppercase,
  allowedRequestTypes,
  characterCount,
  contains,
  containsCode,
  endpointReachability,
  endsWith,
  injectTools,
  jsonKeys,
  jsonSchema,
  jwt,
  log,
  metadata,
  modelJudge,
  modelRules,
  modelWhitelist,
  pii,
  regexMatch,
  regexReplace,
  requiredMetadataKeys,
  sentenceCount,
  validNumberRange,
  validUrls,
  webhook,
  wordCount,
];

const byId = new Map<string, BuiltInCheck>(ALL.map((check) => [check.id, check]));

/**
 * Other ids the reference gateway has given a check: its current releases name the model allow-list
 * `modelwhitelist`, its earlier ones `modelWhitelist`, and configs of both kinds exist. Results and logs
 * show the check's own id.
 */
const ALIASES = new Map<string, string>([['modelwhitelist', 'modelWhitelist']]);

/** Every built-in check, in id order. */
export const BUILT_IN_CHECKS: readonly BuiltInCheck[] = [...ALL].sort((a, b) => a.id.localeCompare(b.id));

/**
 * The names of every built-in check's parameters that say where it sends the call (annotated
 * `ADDRESS_ANNOTATION`, as `HttpUrlSchema` is), at any depth of its schema: `webhookURL`, `logURL`.
 */
export const CHECK_ADDRESS_FIELDS: readonly string[] = [
  ...new Set(BUILT_IN_CHECKS.flatMap((check) => addressFieldsOf(check.parameters))),
].sort();

function addressFieldsOf(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as Record<string, unknown>;
  const found: string[] = [];
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  for (const [name, field] of Object.entries(properties)) {
    if ((field as Record<string, unknown>)[ADDRESS_ANNOTATION] === true) found.push(name);
    found.push(...addressFieldsOf(field));
  }
  for (const key of ['anyOf', 'allOf', 'oneOf', 'items', 'additionalProperties', 'patternProperties']) {
    const inner = node[key];
    const children = Array.isArray(inner)
      ? inner
      : key === 'patternProperties' && inner !== null && typeof inner === 'object'
        ? Object.values(inner)
        : [inner];
    for (const child of children) found.push(...addressFieldsOf(child));
  }
  return found;
}

/** The check a config's id names (`default.contains` or `contains`), or undefined when there is none. */
export function findCheck(id: string): BuiltInCheck | undefined {
  const bare = bareId(id);
  return byId.get(ALIASES.get(bare) ?? bare);
}

/** `default.<id>`: the form results and logs name a check by, whichever form (or alias) the config used. */
export function canonicalCheckId(id: string): string {
  return `${CHECK_NAMESPACE}.${findCheck(id)?.id ?? bareId(id)}`;
}

function bareId(id: string): string {
  const prefix = `${CHECK_NAMESPACE}.`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}

/** Why a config's check cannot run: the message names the check and the field; `param` is the field alone. */
export interface CheckProblem {
  /** `default.wordCount: parameters.minWords must be at least 0` */
  message: string;
  /** Relative to the check entry: `id`, `parameters`, `parameters.minWords`. */
  param: string;
}

const EVENT_NAMES: Record<HookEvent, string> = {
  beforeRequestHook: 'before the request (before_request_hooks, input_guardrails)',
  afterRequestHook: 'on the answer (after_request_hooks, output_guardrails)',
};

/**
 * Validates a check as a config names it, for the hook list of `event`; null when it can run. The engine
 * turns a problem into the 400 of config validation, with its own path before `param`.
 */
export function checkParameterError(id: string, parameters: unknown, event: HookEvent): CheckProblem | null {
  const check = findCheck(id);
  if (check === undefined) {
    return { message: `${id}: ${unknownCheckMessage(id)}`, param: 'id' };
  }
  const name = canonicalCheckId(id);
  if (check.events !== undefined && !check.events.includes(event)) {
    const where = check.events.map((e) => EVENT_NAMES[e]).join(' or ');
    return { message: `${name}: cannot be used ${EVENT_NAMES[event]}; it runs only ${where}`, param: 'id' };
  }
  const given = parameters ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) {
    return { message: `${name}: parameters must be an object`, param: 'parameters' };
  }
  const { not, ...own } = given as Record<string, unknown>;
  if (not !== undefined && typeof not !== 'boolean') {
    return { message: `${name}: parameters.not must be a boolean`, param: 'parameters.not' };
  }
  try {
    validatorOf(check).assert(own);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { message: `${name}: ${error.message}`, param: error.param ?? 'parameters' };
  }
  const broken = check.refine?.(own);
  if (broken != null) return { message: `${name}: ${broken.param} ${broken.message}`, param: broken.param };
  return null;
}

const validators = new Map<BuiltInCheck, SchemaValidator<BuiltInCheck['parameters']>>();

function validatorOf(check: BuiltInCheck): SchemaValidator<BuiltInCheck['parameters']> {
  let validator = validators.get(check);
  if (validator === undefined) {
    validator = compileValidator(check.parameters, {
      code: 'invalid_config',
      rootPath: 'parameters',
      subject: 'parameters',
      rootParam: 'parameters',
    });
    validators.set(check, validator);
  }
  return validator;
}

function unknownCheckMessage(id: string): string {
  const wanted = bareId(id).toLowerCase();
  const near = ALL.find((check) => check.id.toLowerCase() === wanted);
  if (near !== undefined) return `is not a known check (did you mean ${CHECK_NAMESPACE}.${near.id}?)`;
  const namespace = id.includes('.') ? id.slice(0, id.indexOf('.')) : null;
  if (namespace !== null && namespace !== CHECK_NAMESPACE) {
    return `is not a known check: only the built-in checks (${CHECK_NAMESPACE}.<id>) are available`;
  }
  return 'is not a known check (see docs/guardrails.md for the built-in checks)';
}
