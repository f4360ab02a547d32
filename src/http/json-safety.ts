// Checks a parsed JSON body before anything else touches it. Iterative (an explicit
// stack), so a 300,000-deep array cannot overflow the call stack; bounded, so a huge
// array or string is refused rather than walked by every later stage.

export interface JsonLimits {
  maxDepth: number;
  maxArrayLength: number;
  maxKeys: number;
  maxStringLength: number;
  /** Longest object key, in characters. */
  maxKeyLength: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 32,
  maxArrayLength: 1000,
  maxKeys: 200,
  maxStringLength: 16_384,
  maxKeyLength: 256,
};

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface JsonProblem {
  /** Dotted path with bracketed indexes where the problem is. */
  field: string;
  message: string;
}

const child = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;

/** A value still to check: where it is, as its parent and its key (the path is spelled out only for a problem). */
interface Node {
  v: unknown;
  parent: Node | null;
  key: string | number;
  depth: number;
}

function pathOf(n: Node): string {
  return n.parent === null ? '' : child(pathOf(n.parent), n.key);
}

/** The problem with the number or string at (parent, key), or null (anything else is checked where it is popped). */
function leafProblem(v: unknown, parent: Node | null, key: string | number, limits: JsonLimits): JsonProblem | null {
  if (typeof v === 'number') {
    if (Number.isFinite(v)) return null;
    const path = parent === null ? '' : child(pathOf(parent), key);
    return { field: path, message: `${path || 'value'} is not a finite number` };
  }
  if (typeof v === 'string' && v.length > limits.maxStringLength) {
    const path = parent === null ? '' : child(pathOf(parent), key);
    return { field: path, message: `${path || 'value'} is longer than ${limits.maxStringLength} characters` };
  }
  return null;
}

const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object';

/**
 * Returns a problem found, or null when the value is safe to process. Numbers and strings are
 * checked as their container is walked; only objects and arrays become stack entries.
 */
export function checkJsonSafety(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): JsonProblem | null {
  if (!isContainer(value)) return leafProblem(value, null, '', limits);
  const stack: Node[] = [{ v: value, parent: null, key: '', depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { v, depth } = node;
    if (depth >= limits.maxDepth) return { field: pathOf(node), message: `the body is nested deeper than ${limits.maxDepth} levels` };
    if (Array.isArray(v)) {
      if (v.length > limits.maxArrayLength) {
        const path = pathOf(node);
        return { field: path, message: `${path || 'body'} has more than ${limits.maxArrayLength} elements` };
      }
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (isContainer(c)) stack.push({ v: c, parent: node, key: i, depth: depth + 1 });
        else {
          const problem = leafProblem(c, node, i, limits);
          if (problem !== null) return problem;
        }
      }
      continue;
    }
    const keys = Object.keys(v as object);
    if (keys.length > limits.maxKeys) {
      const path = pathOf(node);
      return { field: path, message: `${path || 'body'} has more than ${limits.maxKeys} keys` };
    }
    for (const k of keys) {
      if (FORBIDDEN_KEYS.has(k)) return { field: child(pathOf(node), k), message: `the key "${k}" is not allowed` };
      if (k.length > limits.maxKeyLength) {
        // The path names the parent and the key's start: quoting 400,000 characters back helps no one.
        const path = pathOf(node);
        return { field: child(path, `${k.slice(0, 32)}…`), message: `${path || 'body'} has a key longer than ${limits.maxKeyLength} characters` };
      }
      const c = (v as Record<string, unknown>)[k];
      if (isContainer(c)) stack.push({ v: c, parent: node, key: k, depth: depth + 1 });
      else {
        const problem = leafProblem(c, node, k, limits);
        if (problem !== null) return problem;
      }
    }
  }
  return null;
}
