/**
 * What introspection (`__schema`) is held to. graphql-armor's depth and cost rules leave it out (the
 * standard introspection query is deeper than other queries may be, with a cost of about 87,000),
 * which let `{ __schema { types { fields { type { ofType { ofType …` 1,600 levels deep run until the
 * executor's stack overflowed. Here `__schema` has a depth limit of its own,
 * {@link GRAPHQL_LIMITS.introspectionDepth}: each field is a level, and so is each inline fragment and
 * fragment spread (graphql-armor counts a spread as two; by its count the standard query is 21 deep,
 * by this one 18). GraphQL's own rule bounds how often the lists of introspection (`fields`,
 * `interfaces`, `possibleTypes`) nest in each other. With no cost limit, what is left is fragments
 * spread many times over: an operation selecting `__schema` runs on graphql-js's executor, which walks
 * a fragment once per selection, not on the compiled one, whose compilation grows with every spread
 * (a document of 1,300 characters spreading fragments a hundred times took 0.1 s to compile, one of
 * 3,200 did not finish in five minutes; graphql-js answers either in about 10 ms).
 */
import { getOperationAST, GraphQLError, type ASTVisitor, type DocumentNode, type ExecutionArgs, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { GRAPHQL_LIMITS } from './limits.ts';

/**
 * The levels of a selection set's deepest selection, in a document whose fragments are `fragment`.
 * Counting stops once past `budget` levels (the result is then some number above it), so the walk
 * never goes deeper than the limit however deep the document; each fragment is walked once per budget
 * left (a fragment spread a thousand times costs one walk), and one met again on its own path (a
 * cycle, which GraphQL's validation refuses) counts as nothing.
 */
function depthCounter(fragment: (name: string) => FragmentDefinitionNode | undefined) {
  const known = new Map<string, number>();
  const onPath = new Set<string>();
  const depthOf = (set: SelectionSetNode, budget: number): number => {
    let deepest = 0;
    for (const s of set.selections) {
      let depth = 1;
      if (s.kind === 'FragmentSpread' || s.selectionSet) {
        // Something below the last level allowed: too deep, by how much does not matter.
        if (budget <= 1) return budget + 1;
        depth += s.kind === 'FragmentSpread' ? spreadDepth(s.name.value, budget - 1) : depthOf(s.selectionSet!, budget - 1);
      }
      deepest = Math.max(deepest, depth);
      if (deepest > budget) break;
    }
    return deepest;
  };
  const spreadDepth = (name: string, budget: number): number => {
    const key = `${budget} ${name}`;
    const definition = fragment(name);
    if (!definition || onPath.has(name)) return 0;
    let depth = known.get(key);
    if (depth === undefined) {
      onPath.add(name);
      depth = depthOf(definition.selectionSet, budget);
      onPath.delete(name);
      known.set(key, depth);
    }
    return depth;
  };
  return depthOf;
}

/** Refuses a `__schema` selection deeper than `limit` levels, as a validation error naming the limit. */
export function introspectionDepthRule(limit: number = GRAPHQL_LIMITS.introspectionDepth) {
  return (context: ValidationContext): ASTVisitor => ({
    Field(node) {
      if (node.name.value !== '__schema' || !node.selectionSet) return undefined;
      const depth = 1 + depthCounter((name) => context.getFragment(name) ?? undefined)(node.selectionSet, limit - 1);
      if (depth > limit) context.reportError(new GraphQLError(`Introspection depth limit of ${limit} exceeded: __schema is selected more than ${limit} levels deep.`, { nodes: node }));
      return false;
    },
  });
}

export function useIntrospectionDepth(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(introspectionDepthRule());
    },
  };
}

/** Whether the operation of `set` (a root selection set) selects `__schema`, through fragments too. */
function selectsSchema(set: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, seen: Set<string>): boolean {
  return set.selections.some((s) => {
    if (s.kind === 'Field') return s.name.value === '__schema';
    if (s.kind === 'InlineFragment') return selectsSchema(s.selectionSet, fragments, seen);
    const fragment = fragments.get(s.name.value);
    if (!fragment || seen.has(s.name.value)) return false;
    seen.add(s.name.value);
    return selectsSchema(fragment.selectionSet, fragments, seen);
  });
}

const introspecting = new WeakMap<DocumentNode, Map<string, boolean>>();

/** Whether the operation executed introspects (selects `__schema`); worked out once per document and operation. */
export function isIntrospection(args: Pick<ExecutionArgs, 'document' | 'operationName'>): boolean {
  let byOperation = introspecting.get(args.document);
  if (!byOperation) introspecting.set(args.document, (byOperation = new Map()));
  const name = args.operationName ?? '';
  let known = byOperation.get(name);
  if (known === undefined) {
    const operation = getOperationAST(args.document, args.operationName);
    const fragments = new Map(args.document.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d] as const] : [])));
    known = operation ? selectsSchema(operation.selectionSet, fragments, new Set()) : false;
    byOperation.set(name, known);
  }
  return known;
}
