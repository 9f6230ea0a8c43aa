import type { GeminiPartialArg } from './google-api-types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Rebuilds the arguments of a function call that Gemini streams as `partialArgs`: each entry names a JSON
 * path (`$.recipe.steps[1]`) and a value; string values for the same path arrive in pieces and are
 * appended. The finished object is serialised once the call is complete.
 *
 * The paths are the model's output, which a prompt can steer: objects are built without a prototype and
 * only own properties are followed, so a key such as `__proto__` or `constructor` is an argument like any
 * other and never reaches the prototypes of the process's objects.
 */
export class PartialArgsBuilder {
  private readonly root: { [key: string]: Json } = emptyObject();

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
      let next = ownValue(node, key);
      if (next === undefined || next === null || typeof next !== 'object') {
        next = typeof path[i + 1] === 'number' ? [] : emptyObject();
        setOwn(node, key, next);
      }
      node = next;
    }
    const last = path[path.length - 1];
    const existing = ownValue(node, last);
    setOwn(node, last, typeof value === 'string' && typeof existing === 'string' ? existing + value : value);
    return true;
  }

  toJSON(): string {
    return JSON.stringify(this.root);
  }
}

function emptyObject(): { [key: string]: Json } {
  return Object.create(null) as { [key: string]: Json };
}

/** The container's own value at key: never one inherited from a prototype. */
function ownValue(container: Json, key: string | number): Json | undefined {
  if (typeof container !== 'object' || container === null) return undefined;
  return Object.prototype.hasOwnProperty.call(container, key)
    ? (container as Record<string | number, Json>)[key]
    : undefined;
}

/**
 * Sets an own data property, whatever the key (`__proto__` included), so no prototype is ever written. An array
 * takes indexes only: a named key on it (`length`) is no part of its JSON and is left out.
 */
function setOwn(container: Json, key: string | number, value: Json): void {
  if (typeof container !== 'object' || container === null) return;
  if (Array.isArray(container) && typeof key !== 'number') return;
  Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
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
