/** Joins a base URL and a path with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  const left = base.endsWith('/') ? base.slice(0, -1) : base;
  const right = path.startsWith('/') ? path : `/${path}`;
  return left + right;
}
