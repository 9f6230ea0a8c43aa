/**
 * The projects a value sent to Vertex AI names, read as Vertex reads them: the segment after each
 * `projects` segment of a path or resource name (percent-decoded, `\` a slash as a URL parser takes it, any
 * case of `projects`), the project of a BigQuery URI (`bq://{project}.{dataset}.{table}`), and the project
 * of a service account's email (`{name}@{project}.iam.gserviceaccount.com`).
 */
import { GatewayError } from '../../core/errors.js';
import type { ProviderTarget } from '../types.js';

/** The project the target's calls are made in: its cloudb_project_id, else its service account's. */
export function targetProject(target: ProviderTarget): string | undefined {
  const project = target.cloudb_project_id ?? target.cloudb_service_account_json?.project_id;
  return typeof project === 'string' && project !== '' ? project : undefined;
}

/** The segment after each `projects` segment of a path or resource name (its query string left out). */
export function projectsNamed(path: string): string[] {
  const segments = decodedSegments(path.split(/[?#]/, 1)[0]);
  const named: string[] = [];
  for (let i = 0; i < segments.length - 1; i++) {
    if (segments[i].toLowerCase() === 'projects') named.push(segments[i + 1]);
  }
  return named;
}

/** The segments of a path as Vertex reads it: percent-decoded, `\` a slash as a URL parser takes it. */
export function decodedSegments(pathname: string): string[] {
  return percentDecoded(pathname).split(/[/\\]/);
}

/** `value` percent-decoded, as Vertex reads a name; as written when it cannot be decoded (nor can Vertex). */
export function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** `projects/{project}` itself, or with a custom method after it (`projects/{project}:method`). */
export function isProject(segment: string, project: string): boolean {
  return segment === project || segment.startsWith(`${project}:`);
}

/**
 * The project a BigQuery URI names: `bq://{project}`, `bq://{project}.{dataset}[.{table}]`, a domain-scoped
 * project (`bq://example.com:my-project.dataset`) whole; undefined for anything else.
 */
export function bigQueryProject(uri: string): string | undefined {
  const match = /^bq:\/\/(.*)$/i.exec(uri.trim());
  if (!match) return undefined;
  const rest = match[1];
  const colon = rest.indexOf(':');
  const dot = rest.indexOf('.', colon === -1 ? 0 : colon);
  return dot === -1 ? rest : rest.slice(0, dot);
}

/**
 * The project a service account's email names, as Google writes one (its domain, which email reads in any
 * case, lower-cased): `{name}@{project}.iam.gserviceaccount.com`, App Engine's default
 * `{project}@appspot.gserviceaccount.com`, Compute Engine's default
 * `{number}-compute@developer.gserviceaccount.com` (by the project's number); undefined for anything else.
 */
export function serviceAccountProject(email: string): string | undefined {
  const match = /^([^@\s]+)@([^@\s]+)$/.exec(email.trim());
  if (!match) return undefined;
  const local = match[1];
  const domain = match[2].toLowerCase();
  const iam = /^(.+)\.iam\.gserviceaccount\.com$/.exec(domain);
  if (iam) return iam[1];
  if (domain === 'appspot.gserviceaccount.com') return local.toLowerCase();
  if (domain === 'developer.gserviceaccount.com') return /^(\d+)-compute$/i.exec(local)?.[1];
  return undefined;
}

/** The first of `named` that is not `own` (any, when `own` is unknown); undefined when all are. */
export function otherProject(named: readonly string[], own: string | undefined): string | undefined {
  return named.find((project) => own === undefined || !isProject(project, own));
}

/** How a refusal of another project goes on, unless it says otherwise. */
const STORED_CREDENTIAL = {
  why: 'the stored vertex-ai credential may not be used there',
  remedy: 'Call with your own credentials to reach another project',
};

/**
 * The refusal of `what` (the path, a body's field, a model) naming project `other` when only `own` may be
 * named: why (a stored credential's call, by default), the project allowed, and what to do instead.
 */
export function otherProjectRefused(
  what: string,
  other: string,
  own: string | undefined,
  options: { param?: string; why?: string; remedy?: string } = {},
): GatewayError {
  const { why, remedy } = { ...STORED_CREDENTIAL, ...options };
  const allowed =
    own === undefined
      ? 'it names no project (set cloudb_project_id on it)'
      : `it is used in project "${own}" only`;
  return new GatewayError('forbidden', `${what} names project "${other}": ${why}, as ${allowed}. ${remedy}`, {
    param: options.param,
  });
}
