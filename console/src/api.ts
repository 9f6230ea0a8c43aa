/**
 * The gateway's API as the console calls it: same origin, the signed-in key in `x-gateway-api-key`.
 * The key lives in sessionStorage only, so it is gone when the tab is closed.
 */
import { dependentsOf, type Dependents } from './dependents';

const KEY_STORAGE = 'gateway-console-api-key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

let onRefused: ((reason: string) => void) | undefined;

/**
 * Called when the gateway refuses the signed-in key (revoked, expired or deleted since): the key is dropped
 * then, so the console signs out rather than showing the same refusal on every page.
 */
export function whenKeyRefused(listener: ((reason: string) => void) | undefined): void {
  onRefused = listener;
}

/** A gateway error, in the OpenAI shape the gateway answers with. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null,
    readonly code: string | null,
    /** What a 409 refusing a change names as depending on it (`error.dependents`). */
    readonly dependents?: Dependents,
  ) {
    super(message);
  }
}

export interface ListAnswer<T> {
  object: 'list';
  data: T[];
  has_more?: boolean;
  total?: number;
}

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; key?: string } = {},
): Promise<T> {
  const key = init.key ?? storedKey();
  const headers: Record<string, string> = {};
  if (key) headers['x-gateway-api-key'] = key;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/v1${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const error = (
      parsed as
        { error?: { message?: string; param?: string; code?: string; dependents?: unknown } } | undefined
    )?.error;
    const failure = new ApiError(
      response.status,
      error?.message ?? `${response.status} ${response.statusText}`,
      error?.param ?? null,
      error?.code ?? null,
      dependentsOf(error?.dependents),
    );
    if (response.status === 401 && init.key === undefined && key && key === storedKey()) {
      storeKey(null);
      onRefused?.(failure.message);
    }
    throw failure;
  }
  return parsed as T;
}

/** `?a=1&b=2` from the set values of `params`. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.param ? `${error.message} (${error.param})` : error.message;
  return error instanceof Error ? error.message : String(error);
}
