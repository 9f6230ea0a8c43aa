/** The management API over HTTP, as the CLI uses it: JSON in and out, errors as CliError. */
import { readDependents, type Dependents } from './dependents.js';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** A failure to show the user; the CLI prints its message and exits with status 1. */
export class CliError extends Error {
  /** What a 409 `conflict` refusing the change names as depending on it (`error.dependents`). */
  readonly dependents: Dependents | undefined;

  constructor(message: string, dependents?: Dependents) {
    super(message);
    this.name = 'CliError';
    this.dependents = dependents;
  }
}

export interface ApiClient {
  /** `headers`: extra request headers (a batch's provider selection). */
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T>;
  /** A multipart upload (the form's file parts stream from disk). */
  upload<T = unknown>(path: string, form: FormData): Promise<T>;
  /** A raw answer, for streaming a download. */
  download(path: string): Promise<Response>;
}

/** `http://host:8787`, `http://host:8787/` and `http://host:8787/v1` all mean the same gateway. */
export function apiBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`--url is not a URL: ${url}`);
  }
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${parsed.origin}${path}/v1`;
}

export function createApiClient(options: { url: string; key: string | undefined }): ApiClient {
  const base = apiBase(options.url);

  async function send(
    path: string,
    init: RequestInit & { headers?: Record<string, string> },
  ): Promise<Response> {
    if (!options.key) {
      throw new CliError('No API key: pass --key or set GATEWAY_API_KEY');
    }
    try {
      return await fetch(`${base}${path}`, {
        ...init,
        headers: { 'x-gateway-api-key': options.key, ...init.headers },
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown; name?: unknown; message?: unknown } }).cause;
      // A file part that cannot be read (gone, or no longer readable, since it was checked) fails the
      // request as fetch does for a network error; it is not the gateway's doing.
      if (cause?.name === 'NotReadableError') {
        throw new CliError(`A file being uploaded could not be read (${String(cause.message)})`);
      }
      throw new CliError(`Cannot reach the gateway at ${base} (${unreachableReason(error, base)})`);
    }
  }

  async function json<T>(response: Response): Promise<T> {
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const dependents = readDependents((parsed as { error?: unknown } | undefined)?.error);
      throw new CliError(describeError(response.status, parsed, text), dependents);
    }
    // Every answer of the management API is JSON: anything else is another server at that address (a
    // web server's page, the console), which the commands must not read as an answer.
    if (parsed === undefined && response.status !== 204) {
      throw new CliError(
        `${base} answered HTTP ${response.status} with a body that is not JSON: is it the gateway's address?`,
      );
    }
    return parsed as T;
  }

  return {
    async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const response = await send(path, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return json<T>(response);
    },

    async upload<T>(path: string, form: FormData) {
      return json<T>(await send(path, { method: 'POST', body: form }));
    },

    async download(path: string) {
      const response = await send(path, { method: 'GET' });
      if (!response.ok) await json(response);
      return response;
    },
  };
}

/** Why fetch could not send: the system's error code, else fetch's own reason ("fetch failed" says none). */
function unreachableReason(error: unknown, base: string): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  // fetch refuses some ports outright (the Fetch standard's "bad ports": 9, 6000, 6665–6669, …).
  if (cause?.message === 'bad port') {
    return `bad port: fetch does not connect to port ${new URL(base).port}`;
  }
  if (typeof cause?.message === 'string' && cause.message) return cause.message;
  return (error as Error).message;
}

function describeError(status: number, body: unknown, text: string): string {
  const error = (body as { error?: { message?: unknown; code?: unknown; param?: unknown } } | undefined)
    ?.error;
  if (error && typeof error.message === 'string') {
    const details = [error.code, error.param ? `param ${String(error.param)}` : undefined].filter(Boolean);
    return `${error.message} (HTTP ${status}${details.length ? `, ${details.join(', ')}` : ''})`;
  }
  return `The gateway answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
}
