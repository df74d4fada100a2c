/**
 * What the variables of a GraphQL request may hold, checked before anything reads them: no key
 * `__proto__`, `constructor` or `prototype` at any level, no list of more than
 * {@link GRAPHQL_INPUT_LIMITS.listItems} items (each would be coerced, checked and perhaps looked up
 * before the operation's own limits could refuse it), and no deeper nesting than any JSON body.
 *
 * A key `__proto__` is an own key of what JSON.parse returns, but copying it into another object by
 * assignment (`out[key] = value`) sets that object's prototype instead: the variables
 * `{"i": {…, "__proto__": {"immutable": true}}}` became an input whose `immutable` GraphQL read
 * through the prototype, and created an immutable property; `{"__proto__": {"i": …}}` was read as
 * `$i`. No input of svc has a field of these names (REST refuses them too), so they are refused by
 * name wherever they are, whatever copies the variables later. The variables of a GET are parsed by
 * yoga, not by svc's JSON body reader, so their nesting is checked here too.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { GRAPHQL_INPUT_LIMITS } from './limits.ts';

/** Keys that name an object's prototype or its constructor rather than a member. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A value met in the variables, and where: its parent and its key there. */
interface Place {
  value: unknown;
  key: string | number;
  parent: Place | undefined;
  depth: number;
}

/** Where a place is, as graphql-js names it in its messages: `i.structuredPropertyInputParams[3].values`. */
function pathOf(place: Place): string {
  const keys: (string | number)[] = [];
  for (let p: Place | undefined = place; p; p = p.parent) keys.push(p.key);
  const path = keys.reverse().reduce<string>((out, k) => (typeof k === 'number' ? `${out}[${k}]` : out ? `${out}.${k}` : k), '');
  return path.length > 100 ? `${path.slice(0, 60)}…${path.slice(-30)}` : path;
}

const variableOf = (place: Place): string => {
  let root = place;
  while (root.parent) root = root.parent;
  return String(root.key);
};

/**
 * Every reason (at most {@link GRAPHQL_INPUT_LIMITS.reportedViolations}) to refuse the variables, each
 * naming the variable and the path to what is refused; empty when there is none. Walks the variables
 * without recursion, whatever their depth.
 *
 *   variablesProblems({ i: { id: 'p', __proto__: {} } }) // (JSON.parse's own key) ['Variable "$i" got invalid value at "i.__proto__"; …']
 */
export function variablesProblems(
  variables: Record<string, unknown>,
  limits: { listItems: number; variablesDepth: number; reportedViolations: number } = GRAPHQL_INPUT_LIMITS,
): string[] {
  const out: string[] = [];
  const refusedKey = (key: string) => `the key "${key}" names an object's prototype, never an input field, and is refused`;
  const stack: Place[] = [];
  for (const key of Object.keys(variables).reverse()) {
    if (PROTOTYPE_KEYS.has(key)) out.push(`The variables hold a key "${key}": it names an object's prototype, never a variable, and is refused`);
    else stack.push({ value: variables[key], key, parent: undefined, depth: 1 });
  }
  while (stack.length > 0 && out.length < limits.reportedViolations) {
    const place = stack.pop()!;
    const { value } = place;
    if (typeof value !== 'object' || value === null) continue;
    const at = () => `Variable "$${variableOf(place)}" got invalid value at "${pathOf(place)}"`;
    if (place.depth > limits.variablesDepth) {
      out.push(`${at()}; it nests deeper than ${limits.variablesDepth} levels of objects and lists`);
      continue;
    }
    if (Array.isArray(value)) {
      if (value.length > limits.listItems) out.push(`${at()}; a list may hold at most ${limits.listItems} items, got ${value.length}`);
      else for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: place, depth: place.depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Place = { value: (value as Record<string, unknown>)[key], key, parent: place, depth: place.depth + 1 };
      if (PROTOTYPE_KEYS.has(key)) out.push(`Variable "$${variableOf(place)}" got invalid value at "${pathOf(child)}"; ${refusedKey(key)}`);
      else stack.push(child);
    }
  }
  return out.slice(0, limits.reportedViolations);
}

/**
 * Refuses variables with {@link variablesProblems} before anything else reads them, as GraphQL refuses
 * variables that do not fit their types: errors with GraphQL's validation code, nothing run.
 */
export function useVariablesShape(): Plugin {
  return {
    onParams({ params, setResult }) {
      const { variables } = params;
      if (!variables || typeof variables !== 'object') return;
      const problems = variablesProblems(variables);
      if (problems.length > 0) setResult({ errors: problems.map((p) => new GraphQLError(p, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })) });
    },
  };
}
