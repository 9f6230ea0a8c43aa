import type { GeminiPartialArg } from './google-api-types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Rebuilds the arguments of a function call that Gemini streams as `partialArgs`: each entry names a JSON
 * path (`$.recipe.steps[1]`) and a value; string values for the same path arrive in pieces and are
 * appended. The finished object is serialised once the call is complete.
 */
export class PartialArgsBuilder {
  private readonly root: { [key: string]: Json } = {};

  apply(arg: GeminiPartialArg): boolean {
    const path = parseJsonPath(arg.jsonPath);
    if (!path || path.length === 0) return false;
    let value: Json;
    if (arg.stringValue !== undefined) value = arg.stringValue;
    else if (arg.numberValue !== undefined) value = arg.numberValue;
    else if (arg.boolValue !== undefined) value = arg.boolValue;
    else if ('nullValue' in arg) value = null;
    else return false;

    let node: Json = this.root;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i];
      const container = node as { [key: string]: Json } & Json[];
      let next: Json | undefined = container[key as never];
      if (next === undefined || next === null || typeof next !== 'object') {
        next = typeof path[i + 1] === 'number' ? [] : {};
        container[key as never] = next as never;
      }
      node = next;
    }
    const last = path[path.length - 1];
    const container = node as { [key: string]: Json } & Json[];
    const existing: Json | undefined = container[last as never];
    container[last as never] = (
      typeof value === 'string' && typeof existing === 'string' ? existing + value : value
    ) as never;
    return true;
  }

  toJSON(): string {
    return JSON.stringify(this.root);
  }
}

/** `$.a.b[2]['c d']` → ['a', 'b', 2, 'c d']; undefined when the path is not of that simple form. */
export function parseJsonPath(path: string): Array<string | number> | undefined {
  if (!path.startsWith('$')) return undefined;
  const out: Array<string | number> = [];
  const pattern = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]/y;
  pattern.lastIndex = 1;
  while (pattern.lastIndex < path.length) {
    const match = pattern.exec(path);
    if (!match) return undefined;
    if (match[1] !== undefined) out.push(match[1]);
    else if (match[2] !== undefined) out.push(Number(match[2]));
    else out.push((match[3] ?? match[4]).replace(/\\(.)/g, '$1'));
  }
  return out;
}
