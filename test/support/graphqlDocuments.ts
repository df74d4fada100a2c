/**
 * GraphQL requests generated from svc's own schema, for the fuzzer: an operation on any root field,
 * its arguments as variables or written in the document, a selection set walked from the field's
 * type (fragments on interfaces and unions, aliases, `__typename`, an introspection chain now and
 * then), and in one place of it something hostile: a list of 10^4–10^5 items, a prototype key
 * (`__proto__`, `constructor`, `prototype`), an unknown field, a value of the wrong type, nesting
 * thousands deep, hundreds of aliases or fragment spreads. Most requests are valid or nearly so, so
 * the generator reaches the resolvers, not only the parser.
 */
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { typeDefs } from '../../server/src/api/graphql/graphqlHandler.ts';

/** svc's schema, as the server serves it (schema.graphql and the entity types generated from the registry). */
export function svcSchema(): GraphQLSchema {
  return buildSchema(typeDefs);
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The pieces a generated request draws on: URNs the test made, and strings of every kind. */
export interface Samples {
  urns: string[];
  strings: string[];
}

/** What goes wrong in one place of a request (or nothing). */
type Fault = 'none' | 'hugeList' | 'prototypeKey' | 'unknownField' | 'wrongType' | 'deepList';

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'];

/** A seeded random number source (mulberry32), for the recursive walks below: a fast-check seed replays a request. */
type Rand = { int(min: number, max: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean };

function rand(seed: number): Rand {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

/** A value of an input type, with `fault` somewhere in it when `r` picks this place for it. */
function inputValue(type: GraphQLInputType, r: Rand, s: Samples, fault: { kind: Fault; placed: boolean }, depth = 0): Json {
  const place = () => {
    if (fault.placed || fault.kind === 'none' || !r.chance(0.3)) return false;
    fault.placed = true;
    return true;
  };
  if (isNonNullType(type)) return inputValue(type.ofType, r, s, fault, depth);
  if (isListType(type)) {
    if (place()) {
      if (fault.kind === 'hugeList') return Array.from({ length: r.pick([10_001, 100_000]) }, () => inputValue(type.ofType, r, s, { kind: 'none', placed: true }, depth + 1));
      if (fault.kind === 'deepList') {
        let v: Json = [];
        for (let i = 0; i < r.pick([100, 3_000]); i++) v = [v];
        return v;
      }
    }
    return Array.from({ length: r.int(0, 3) }, () => inputValue(type.ofType, r, s, fault, depth + 1));
  }
  if (place() && fault.kind === 'wrongType') return r.pick<Json>([{ a: 1 }, [1], 1e400 as unknown as number, '\u0000', true]);
  if (isEnumType(type)) return r.chance(0.95) ? r.pick(type.getValues()).name : 'NOT_A_VALUE';
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        return r.pick([0, 1, 10, 1000, -1, 2 ** 31, 9_007_199_254_740_991]);
      case 'Float':
        return r.pick([0, 1.5, 60, -1e308, 1e-300]);
      case 'Boolean':
        return r.chance(0.5);
      default:
        return r.chance(0.6) ? r.pick(s.urns) : r.pick(s.strings);
    }
  }
  if (isInputObjectType(type)) {
    const out: Record<string, Json> = {};
    for (const f of Object.values(type.getFields())) {
      if (isNonNullType(f.type) || (depth < 4 && r.chance(0.5))) out[f.name] = inputValue(f.type, r, s, fault, depth + 1);
    }
    if (place()) {
      const key = fault.kind === 'prototypeKey' ? r.pick(PROTOTYPE_KEYS) : fault.kind === 'unknownField' ? 'notAField' : undefined;
      if (key) Object.defineProperty(out, key, { value: { immutable: true, cardinality: 'MULTIPLE' }, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return null;
}

/** A value as a GraphQL literal in the document (object keys written as they are, prototype keys too). */
function literal(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.keys(v).map((k) => `${k}: ${literal(v[k]!)}`).join(', ')}}`;
  if (typeof v === 'string') return /^[A-Z][A-Z_]*$/.test(v) ? v : JSON.stringify(v);
  return String(v);
}

/** A selection set on `type`, `depth` levels at most, with fragments on abstract types and some aliases. */
function selection(schema: GraphQLSchema, type: GraphQLNamedType, r: Rand, depth: number, fragments: string[]): string {
  if (isScalarType(type) || isEnumType(type)) return '';
  if (isUnionType(type) || isInterfaceType(type)) {
    const possible = schema.getPossibleTypes(type);
    const inline = possible.slice(0, r.int(1, Math.max(1, possible.length))).map((t) => `... on ${t.name} ${selection(schema, t, r, depth, fragments) || '{ __typename }'}`);
    return `{ __typename ${inline.join(' ')} }`;
  }
  const object = type as GraphQLObjectType;
  const fields = Object.values(object.getFields()).filter((f) => !f.args.some((a) => isNonNullType(a.type)));
  const picked = fields.filter(() => r.chance(0.5));
  if (picked.length === 0 && fields[0]) picked.push(fields[0]);
  const parts: string[] = ['__typename'];
  for (const f of picked) {
    const inner = getNamedType(f.type);
    const leaf = isScalarType(inner) || isEnumType(inner);
    if (!leaf && depth <= 0) continue;
    const sub = leaf ? '' : selection(schema, inner, r, depth - 1, fragments);
    if (!leaf && !sub) continue;
    const alias = r.chance(0.1) ? `a${r.int(0, 999)}: ` : '';
    parts.push(`${alias}${f.name} ${sub}`);
  }
  // Now and then the object's selection goes into a named fragment, spread where it was.
  if (r.chance(0.15)) {
    const name = `F${fragments.length}`;
    fragments.push(`fragment ${name} on ${object.name} { ${parts.join(' ')} }`);
    return `{ ...${name} }`;
  }
  return `{ ${parts.join(' ')} }`;
}

/** The shapes of document that stress the parser and the validation rules rather than the resolvers. */
function hostileDocument(r: Rand, field: string, args: string, sub: string): string {
  const n = r.pick([3, 60, 2_000]);
  switch (r.int(0, 4)) {
    case 0: {
      // many aliases of the field (its arguments and selection kept short, so that the text stays within a body)
      const one = `${field}${args.length > 200 ? '' : args} ${sub.length > 200 ? '{ __typename }' : sub}`;
      return `{ ${Array.from({ length: r.pick([50, 500, 3_000]) }, (_, i) => `a${i}: ${one}`).join(' ')} }`;
    }
    case 1: // an introspection chain
      return `{ __schema { types { ${'fields { type { '.repeat(n)}name${' } }'.repeat(n)} } } }`;
    case 2: // fragments spreading each other, each several times
      return `{ ...A } ${Array.from({ length: 8 }, (_, i) => `fragment ${String.fromCharCode(65 + i)} on Query { __typename ${`...${String.fromCharCode(66 + i)} `.repeat(4)}}`).join(' ')}`;
    case 3: // selections nested deep
      return `{ ${field}${args} ${'{ __typename x '.repeat(n)}${'}'.repeat(n)} }`;
    default: // a list literal nested deep in an argument
      return `{ ${field}(urn: ${'['.repeat(n * 5)}"x"${']'.repeat(n * 5)}) { __typename } }`;
  }
}

/** A GraphQL request body (`{"query", "variables"?}`) generated from the schema; see the module's comment. */
export function graphqlRequest(schema: GraphQLSchema, samples: Samples): fc.Arbitrary<string> {
  const roots: [string, GraphQLField<unknown, unknown>][] = [
    ...Object.values(schema.getQueryType()!.getFields()).map((f): [string, GraphQLField<unknown, unknown>] => ['query', f]),
    ...Object.values(schema.getMutationType()!.getFields()).map((f): [string, GraphQLField<unknown, unknown>] => ['mutation', f]),
  ];
  return fc
    .record({
      fault: fc.constantFrom<Fault>('none', 'none', 'none', 'hugeList', 'prototypeKey', 'unknownField', 'wrongType', 'deepList'),
      form: fc.constantFrom('variables', 'variables', 'inline', 'hostile'),
      seed: fc.nat(),
    })
    .map(({ fault: kind, form, seed }) => {
      const r = rand(seed);
      const [operation, field] = r.pick(roots);
      const fault = { kind, placed: false };
      const values = Object.fromEntries(field.args.map((a) => [a.name, inputValue(a.type, r, samples, fault)]));
      const fragments: string[] = [];
      const sub = selection(schema, getNamedType(field.type), r, r.int(1, 6), fragments);
      const inlineArgs = () => (field.args.length ? `(${field.args.map((a) => `${a.name}: ${literal(values[a.name]!)}`).join(', ')})` : '');
      if (form === 'hostile') return JSON.stringify({ query: hostileDocument(r, field.name, inlineArgs(), sub) });
      if (form === 'inline') return JSON.stringify({ query: `${operation} { ${field.name}${inlineArgs()} ${sub} } ${fragments.join(' ')}` });
      const declared = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
      const args = field.args.length ? `(${field.args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
      // Written out by hand so that a prototype key stays a key of the JSON text.
      const variables = `{${Object.keys(values).map((k) => `${JSON.stringify(k)}:${jsonText(values[k]!)}`).join(',')}}`;
      return `{"query":${JSON.stringify(`${operation}${declared ? `(${declared})` : ''} { ${field.name}${args} ${sub} } ${fragments.join(' ')}`)},"variables":${variables}}`;
    });
}

/** JSON text of a value, own keys as they are (`__proto__` included). */
function jsonText(v: Json): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return `{${Object.keys(v).map((k) => `${JSON.stringify(k)}:${jsonText(v[k]!)}`).join(',')}}`;
}
