/**
 * DataHub's Python SDK sends a filter's `negated` as a string (`get_urns_by_filter` passes
 * `{"negated": "false"}` through as a variable), which DataHub's GraphQL engine coerces to a boolean
 * and graphql-js refuses. So that the SDK's queries run unchanged, a `negated` of `"true"` or
 * `"false"` in a filter object of the variables (an object with a string `field`) becomes the boolean
 * before the variables are checked; anything else is left for GraphQL to judge.
 */
import type { Plugin } from 'graphql-yoga';

/**
 * A copy of `v` with string flags as booleans. Copied by Object.fromEntries, which defines each key as
 * an own member: an assignment `out[key] = …` with the key `__proto__` (an own key of what JSON.parse
 * returns) would set the copy's prototype, and GraphQL would read the object's fields through it.
 */
export function normalise(v: unknown, depth = 0): unknown {
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => normalise(x, depth + 1));
  const o = v as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(o).map(([k, x]) => [k, normalise(x, depth + 1)]));
  if (typeof o.field === 'string' && typeof o.negated === 'string' && /^(true|false)$/i.test(o.negated)) out.negated = o.negated.toLowerCase() === 'true';
  return out;
}

export function useStringFilterFlags(): Plugin {
  return {
    onParams({ params, setParams }) {
      if (params.variables && typeof params.variables === 'object') setParams({ ...params, variables: normalise(params.variables) as Record<string, unknown> });
    },
  };
}
