/**
 * Where an operation's answer holds Floats: GraphQL writes a Float as a JSON number, so `30` comes back
 * where DataHub's GraphQL (Java doubles) writes `30.0`, as every read in svc does (see contract/doubles.ts).
 * The answer is written with the Floats at these paths as doubles (api/json.ts).
 */
import { getNamedType, getOperationAST, isCompositeType, isInterfaceType, isObjectType, type DocumentNode, type GraphQLCompositeType, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { DoublePlaces } from '../json.ts';

const cache = new WeakMap<DocumentNode, Map<string, DoublePlaces>>();

/**
 * The response paths (`data.<key>.<key>…`, list indices left out) of the Float fields the executed
 * operation selects, through fragments, and their keys when no other field has one of them. GraphQL's
 * validation makes a response key at one path a Float in every fragment that selects it or in none
 * (fields that merge have the same scalar type).
 */
export function floatPaths(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): DoublePlaces {
  let byOperation = cache.get(document);
  if (!byOperation) cache.set(document, (byOperation = new Map()));
  const name = operationName ?? '';
  const known = byOperation.get(name);
  if (known) return known;
  const found = new Set<string>();
  const floatKeys = new Set<string>();
  const otherKeys = new Set<string>(['data', 'errors', 'extensions']);
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d] as const] : [])));
  // A fragment spread again at the same path adds nothing (GraphQL merges it): walked once there, a
  // fragment spread a hundred times in each of five fragments is not walked 100^5 times.
  const walked = new Set<string>();
  const walk = (set: SelectionSetNode, type: GraphQLCompositeType, path: string, seen: ReadonlySet<string>): void => {
    for (const s of set.selections) {
      if (s.kind === 'InlineFragment') {
        const on = s.typeCondition ? schema.getType(s.typeCondition.name.value) : type;
        if (on && isCompositeType(on)) walk(s.selectionSet, on, path, seen);
      } else if (s.kind === 'FragmentSpread') {
        const fragment = fragments.get(s.name.value);
        const on = fragment && schema.getType(fragment.typeCondition.name.value);
        const at = `${path} ${s.name.value}`;
        if (fragment && on && isCompositeType(on) && !seen.has(s.name.value) && !walked.has(at)) {
          walked.add(at);
          walk(fragment.selectionSet, on, path, new Set([...seen, s.name.value]));
        }
      } else {
        const key = s.alias?.value ?? s.name.value;
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[s.name.value] : undefined;
        if (!field) {
          otherKeys.add(key); // __typename (a field of a union is none but it)
          continue;
        }
        const at = `${path}.${key}`;
        const named = getNamedType(field.type);
        if (named.name === 'Float') {
          found.add(at);
          floatKeys.add(key);
        } else {
          otherKeys.add(key);
          if (s.selectionSet && isCompositeType(named)) walk(s.selectionSet, named, at, seen);
        }
      }
    }
  };
  if (operation && root) walk(operation.selectionSet, root, 'data', new Set());
  const places: DoublePlaces = [...floatKeys].some((k) => otherKeys.has(k)) ? { paths: found } : { paths: found, keys: floatKeys };
  byOperation.set(name, places);
  return places;
}
