/**
 * A walk over every object within a JSON value (a schema, a body), depth-first on a stack of its
 * own: a value nested deeper than the call stack allows is walked all the same.
 */

/**
 * Calls `visit` on every object (arrays are walked through, not visited) within `root`. `visit`
 * answers the values to walk on from that object; when it answers nothing, all of its values.
 */
export function walkObjects(root: unknown, visit: (node: Record<string, unknown>) => Iterable<unknown> | void): void {
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) for (const x of node) stack.push(x);
    else if (node && typeof node === 'object') {
      const object = node as Record<string, unknown>;
      for (const next of visit(object) ?? Object.values(object)) stack.push(next);
    }
  }
}
