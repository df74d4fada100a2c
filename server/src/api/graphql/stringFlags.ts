/**
 * DataHub's Python SDK sends a filter's `negated` as a string (`get_urns_by_filter` passes
 * `{"negated": "false"}` through as a variable), which DataHub's GraphQL engine coerces to a boolean
 * and graphql-js refuses. So that the SDK's queries run unchanged, a `negated` of `"true"` or
 * `"false"` in a filter object of the variables (an object with a string `field`) becomes the boolean
 * before the variables are checked; anything else is left for GraphQL to judge.
 */
import type { Plugin } from 'graphql-yoga';

function normalise(v: unknown, depth: number): unknown {
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => normalise(x, depth + 1));
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) out[k] = normalise(x, depth + 1);
  if (typeof o.field === 'string' && typeof o.negated === 'string' && /^(true|false)$/i.test(o.negated)) out.negated = o.negated.toLowerCase() === 'true';
  return out;
}

export function useStringFilterFlags(): Plugin {
  return {
    onParams({ params, setParams }) {
      if (params.variables && typeof params.variables === 'object') setParams({ ...params, variables: normalise(params.variables, 0) as Record<string, unknown> });
    },
  };
}
