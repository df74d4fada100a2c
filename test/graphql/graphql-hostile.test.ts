/**
 * Hostile GraphQL requests through the HTTP API (issue 48: one request must never take svc down).
 * Each class of request is generated at several sizes, and each refusal is checked the same way: the
 * status and `extensions.code` GraphQL gives it, a message naming the limit passed or the key refused,
 * nothing stored changed, and the server still answering (`/health` and a query) right after.
 *
 * Classes: documents nested deeper than the limit in every construct GraphQL nests (selections, list
 * and input-object literals, arguments, variable types, introspection's type references), documents
 * too long or of too many tokens, alias floods, fragment cycles and fragments spread over and over;
 * prototype keys (`__proto__`, `constructor`, `prototype`) and unknown fields at every level of every
 * operation's variables and literals; small requests asking for a lot of work (lists of 100,000 items in
 * every list input, thousands of facets, filters or filter values, thousands of missing properties).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getIntrospectionQuery } from 'graphql';
import { GRAPHQL_INPUT_LIMITS, GRAPHQL_LIMITS } from '../../server/src/api/graphql/limits.ts';
import { expectRejected } from '../support/expectRejected.ts';
import type { GraphQLAnswer, GraphQLError } from '../support/graphql.ts';
import { createDataset, createProperty, datasetUrn, propertyUrn } from '../support/structuredProperties.ts';
import { startTestServer, type TestServer } from '../support/testServer.ts';

let s: TestServer;
const DATASET = datasetUrn('hostile.ds');
const PROPERTY = propertyUrn('hostile.prop');

before(async () => {
  s = await startTestServer();
  await createProperty(s, 'hostile.prop', { cardinality: 'MULTIPLE' });
  await createDataset(s, 'hostile.ds');
});
after(() => s.close());

/** Sends a GraphQL POST whose body is `body` as written (a key such as `__proto__` stays an own key). */
const post = (body: string, headers: Record<string, string> = {}) => s.request('/api/graphql', { method: 'POST', body, headers });
const body = (query: string, variables?: unknown) => JSON.stringify({ query, variables });

/** The server still answers: its health check, and a GraphQL query. */
async function alive(): Promise<void> {
  assert.equal((await s.request('/health')).status, 200, 'the health check answers');
  const res = await post(body('{ __typename }'));
  assert.deepEqual(await res.json(), { data: { __typename: 'Query' }, extensions: {} });
}

interface Refusal {
  /** HTTP status: 200 for `application/json` (what DataHub's clients ask for), whatever the error. */
  status?: number;
  /** `extensions.code` of the error: GraphQL's own (`GRAPHQL_PARSE_FAILED`, …) or svc's HTTP status (400). */
  code: string | number;
  /** What the error's message says. */
  message: RegExp;
}

/**
 * Sends a request that must be refused: the answer has an error with `code` whose message matches,
 * no data, nothing stored changed, and the server answers afterwards. Returns the answer's errors.
 */
async function expectRefused(req: () => Promise<Response>, { status = 200, code, message }: Refusal): Promise<GraphQLError[]> {
  let errors: GraphQLError[] = [];
  await expectRejected(s, req, status, (raw) => {
    const answer = JSON.parse(raw) as GraphQLAnswer['body'];
    errors = answer.errors ?? [];
    const error = errors.find((e) => message.test(e.message));
    assert.ok(error, `expected an error matching ${message}, got ${raw.slice(0, 500)}`);
    assert.equal(error.extensions?.code, code, raw.slice(0, 500));
    assert.ok(!answer.data || Object.values(answer.data).every((v) => v === null), `no data: ${raw.slice(0, 500)}`);
    assert.ok(raw.length < 20_000, `the answer is short (${raw.length} characters)`);
  });
  await alive();
  return errors;
}

/** An answer below 500 without an internal error, whatever it says; the server answers afterwards. */
async function expectAnswered(req: () => Promise<Response>): Promise<GraphQLAnswer['body']> {
  const res = await req();
  const raw = await res.text();
  assert.ok(res.status < 500, `${res.status}: ${raw.slice(0, 500)}`);
  const answer = JSON.parse(raw) as GraphQLAnswer['body'];
  for (const e of answer.errors ?? []) assert.notEqual(e.extensions?.code, 500, raw.slice(0, 500));
  await alive();
  return answer;
}

const NESTING = GRAPHQL_LIMITS.nesting;
const TOO_DEEP = new RegExp(`^Syntax Error: The document nests deeper than ${NESTING} levels of braces, brackets and parentheses`);
/** What refuses a document nested too deeply: its nesting, or its length first when it is longer than the limit too. */
const tooDeep = (doc: string): Refusal => ({
  code: 'GRAPHQL_PARSE_FAILED',
  message: doc.length > GRAPHQL_LIMITS.length ? new RegExp(`^Syntax Error: The document is ${doc.length} characters long, more than the ${GRAPHQL_LIMITS.length}`) : TOO_DEEP,
});

/** Documents nested `depth` levels deep in each construct GraphQL nests (each level one bracket). */
const NESTED: Record<string, (depth: number) => string> = {
  'selection sets': (d) => `{ entity(urn: "${DATASET}") ${'{ ... on Dataset '.repeat(d - 2)}{ urn }${' }'.repeat(d - 2)} }`,
  'list literals': (d) =>
    `mutation { removeStructuredProperties(input: {assetUrn: "${DATASET}", structuredPropertyUrns: ${'['.repeat(d - 3)}"${PROPERTY}"${']'.repeat(d - 3)}}) { properties { associatedUrn } } }`,
  'input object literals': (d) =>
    `mutation { createStructuredProperty(input: {qualifiedName: "hostile.deep", valueType: "urn:li:dataType:svc.string", entityTypes: ["dataset"], typeQualifier: ${'{allowedTypes: '.repeat(d - 3)}"x"${'}'.repeat(d - 3)}}) { urn } }`,
  'argument lists': (d) => `{ entity${'('.repeat(d - 1)}urn: "${DATASET}"${')'.repeat(d - 1)} { urn } }`,
  'variable types': (d) => `query($v: ${'['.repeat(d - 1)}String${']'.repeat(d - 1)}) { __typename }`,
  'introspection type references': (d) => `{ __schema { types { fields { type ${'{ ofType '.repeat(d - 5)}{ name }${' }'.repeat(d - 5)} } } } }`,
};

describe('a document nested deeper than the limit is refused before it is parsed', () => {
  for (const [construct, nested] of Object.entries(NESTED)) {
    test(`in ${construct}`, async () => {
      for (const depth of [NESTING + 1, 200, 2_000, 10_000, 30_000]) {
        const doc = nested(depth);
        await expectRefused(() => post(body(doc)), tooDeep(doc));
      }
      // Just within the limit the document is parsed, and answered or refused by GraphQL's rules: never a fault.
      await expectAnswered(() => post(body(nested(NESTING))));
    });
  }

  test('in any mix of brackets, however the brackets pair up', async () => {
    const opening = { '{': '{ a ', '[': '[', '(': '(a: ' } as const;
    const closing = { '{': '}', '[': ']', '(': ')' } as const;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('{', '[', '('), { minLength: NESTING + 1, maxLength: 5_000 }), fc.boolean(), async (brackets, closed) => {
        const doc = `query ${brackets.map((b) => opening[b]).join('')}${closed ? [...brackets].reverse().map((b) => closing[b]).join('') : ''}`;
        await expectRefused(() => post(body(doc)), { code: 'GRAPHQL_PARSE_FAILED', message: TOO_DEEP });
      }),
      { numRuns: 25 },
    );
  });

  test('brackets in strings and comments are not counted', async () => {
    const brackets = '{['.repeat(5_000);
    const answer = await expectAnswered(() => post(body(`# ${brackets}\n{ entity(urn: "${brackets}") { urn } }`)));
    assert.equal(answer.errors?.[0]?.message, `Invalid urn!: ${brackets}`);
    const block = await expectAnswered(() => post(body(`{ entity(urn: """${brackets}""") { urn } }`)));
    assert.equal(block.errors?.[0]?.message, `Invalid urn!: ${brackets}`);
  });

  test('by GET and by GraphQL over HTTP’s media type alike (400 there, as for any document that does not parse)', async () => {
    const doc = NESTED['list literals']!(NESTING + 50);
    await expectRefused(() => s.request(`/api/graphql?query=${encodeURIComponent(doc.replace('mutation', 'query'))}`), { code: 'GRAPHQL_PARSE_FAILED', message: TOO_DEEP });
    await expectRefused(() => post(body(doc), { accept: 'application/graphql-response+json' }), { status: 400, code: 'GRAPHQL_PARSE_FAILED', message: TOO_DEEP });
  });
});

describe('a document too long or of too many tokens is refused before it is parsed', () => {
  test('longer than the limit, whatever it holds', async () => {
    for (const filler of ['#', ' ', '"']) {
      const doc = filler === '"' ? `{ entity(urn: "${'x'.repeat(GRAPHQL_LIMITS.length)}") { urn } }` : `{ __typename }\n${filler}${filler.repeat(GRAPHQL_LIMITS.length)}`;
      await expectRefused(() => post(body(doc)), {
        code: 'GRAPHQL_PARSE_FAILED',
        message: new RegExp(`^Syntax Error: The document is ${doc.length} characters long, more than the ${GRAPHQL_LIMITS.length} a document may have`),
      });
    }
  });

  test('of more tokens than the limit', async () => {
    for (const n of [GRAPHQL_LIMITS.tokens + 1, 9_000]) {
      await expectRefused(() => post(body(`{ ${'__typename '.repeat(n)}}`)), { code: 'GRAPHQL_PARSE_FAILED', message: new RegExp(`Token limit of ${GRAPHQL_LIMITS.tokens} exceeded`) });
    }
  });
});

describe('introspection is held to a depth limit of its own', () => {
  // `__schema` selected `levels` deep, in as many brackets.
  const chain = (levels: number) => NESTED['introspection type references']!(levels);

  test('deeper than the limit, it is refused as a document that does not validate', async () => {
    for (const levels of [GRAPHQL_LIMITS.introspectionDepth + 1, 40, NESTING]) {
      await expectRefused(() => post(body(chain(levels))), { code: 'GRAPHQL_VALIDATION_FAILED', message: new RegExp(`^Introspection depth limit of ${GRAPHQL_LIMITS.introspectionDepth} exceeded`) });
    }
  });

  test('the standard introspection query (GraphiQL’s, code generators’) is answered', async () => {
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });
    const answer = await expectAnswered(() => post(body(query)));
    assert.equal(answer.errors, undefined);
    assert.equal((answer.data?.__schema as { queryType: { name: string } }).queryType.name, 'Query');
  });

  test('fragments spread over and over are answered, each walked once where it is spread', async () => {
    for (const [levels, copies] of [
      [3, 30],
      [5, 100],
    ] as const) {
      let doc = '{ __schema { types { ...F0 } } } ';
      for (let i = 0; i < levels; i++) doc += `fragment F${i} on __Type { ${Array.from({ length: copies }, () => `... on __Type { ...F${i + 1} }`).join(' ')} } `;
      doc += `fragment F${levels} on __Type { name }`;
      const answer = await expectAnswered(() => post(body(doc)));
      assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
      assert.ok((answer.data?.__schema as { types: unknown[] }).types.length > 0);
    }
  });
});

describe('documents that multiply their work are refused', () => {
  test('aliases beyond the limit', async () => {
    for (const n of [GRAPHQL_LIMITS.aliases + 1, 300, 1_000]) {
      const doc = `{ ${Array.from({ length: n }, (_, i) => `a${i}: structuredProperty(urn: "${PROPERTY}") { urn }`).join(' ')} }`;
      await expectRefused(() => post(body(doc)), { code: n * 8 > GRAPHQL_LIMITS.tokens ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED', message: /Aliases limit of 30 exceeded|Token limit of 5000 exceeded/ });
    }
  });

  test('fragment cycles of any length', async () => {
    for (const n of [1, 2, 10, 300]) {
      const doc = `{ ...F0 } ${Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ...F${(i + 1) % n} }`).join(' ')}`;
      await expectRefused(() => post(body(doc)), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Cannot spread fragment "F\d+" within itself/ });
    }
  });

  test('long chains of fragments, and fragments spread over and over', async () => {
    const chain = `{ ...F0 } ${Array.from({ length: 600 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} }`).join(' ')} fragment F600 on Query { __typename }`;
    await expectRefused(() => post(body(chain)), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Query depth limit of 12 exceeded/ });
    let spread = '{ ...F0 } ';
    for (let i = 0; i < 5; i++) spread += `fragment F${i} on Query { ${Array.from({ length: 100 }, () => `...F${i + 1}`).join(' ')} } `;
    spread += `fragment F5 on Query { structuredProperty(urn: "${PROPERTY}") { urn } }`;
    await expectRefused(() => post(body(spread)), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Query Cost limit of 5000 exceeded/ });
  });
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** An operation of each root field that takes an input, with valid variables (each would be accepted). */
const OPERATIONS: { name: string; query: string; variables: { i: Json } }[] = [
  {
    name: 'createStructuredProperty',
    query: 'mutation($i: CreateStructuredPropertyInput!) { createStructuredProperty(input: $i) { urn } }',
    variables: { i: { id: 'hostile.created', qualifiedName: 'hostile.created', valueType: 'urn:li:dataType:svc.string', entityTypes: ['dataset'], cardinality: 'SINGLE', allowedValues: [{ stringValue: 'a', description: 'A' }] } },
  },
  {
    name: 'updateStructuredProperty',
    query: 'mutation($i: UpdateStructuredPropertyInput!) { updateStructuredProperty(input: $i) { urn } }',
    variables: { i: { urn: PROPERTY, displayName: 'Renamed', newEntityTypes: ['dataFlow'], typeQualifier: { newAllowedTypes: [] } } },
  },
  {
    name: 'upsertStructuredProperties',
    query: 'mutation($i: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $i) { properties { associatedUrn } } }',
    variables: { i: { assetUrn: DATASET, structuredPropertyInputParams: [{ structuredPropertyUrn: PROPERTY, values: [{ stringValue: 'b' }] }] } },
  },
  {
    name: 'removeStructuredProperties',
    query: 'mutation($i: RemoveStructuredPropertiesInput!) { removeStructuredProperties(input: $i) { properties { associatedUrn } } }',
    variables: { i: { assetUrn: DATASET, structuredPropertyUrns: [PROPERTY] } },
  },
  {
    name: 'searchAcrossEntities',
    query: 'query($i: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $i) { total } }',
    variables: {
      i: {
        types: ['DATASET'],
        query: '*',
        count: 5,
        orFilters: [{ and: [{ field: 'platform', values: ['urn:li:dataPlatform:hive'], negated: 'false' }] }],
        searchFlags: { includeSoftDeleted: false },
        sortInput: { sortCriterion: { field: 'urn', sortOrder: 'ASCENDING' } },
      },
    },
  },
  {
    name: 'aggregateAcrossEntities',
    query: 'query($i: AggregateAcrossEntitiesInput!) { aggregateAcrossEntities(input: $i) { facets { field } } }',
    variables: { i: { types: ['DATASET'], query: '*', facets: ['platform'], searchFlags: { maxAggValues: 5 } } },
  },
];

/** The paths of every object in `v` (`[]` for `v` itself). */
function objectPaths(v: Json, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => objectPaths(x, [...at, i]));
  if (v === null || typeof v !== 'object') return [];
  return [at, ...Object.entries(v).flatMap(([k, x]) => objectPaths(x, [...at, k]))];
}

/** A copy of `v` with the own key `key` (set as a member, never as a prototype) in the object at `path`. */
function withKey(v: Json, path: (string | number)[], key: string, value: Json): Json {
  const copy = structuredClone(v);
  let target = copy as Record<string, Json>;
  for (const p of path) target = target[p] as Record<string, Json>;
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** How graphql-js and svc write a path: `i.allowedValues[0]`. */
const printPath = (path: (string | number)[]) => path.reduce<string>((out, k) => (typeof k === 'number' ? `${out}[${k}]` : out ? `${out}.${k}` : k), '');

/** Fields whose values are enums, written bare in a literal. */
const ENUM_FIELDS = new Set(['cardinality', 'types', 'sortOrder', 'condition']);

/** A value as a GraphQL literal, with the extra field `extra` in the object at `path`. */
function literal(v: Json, path: (string | number)[] | undefined, extra: string, field?: string): string {
  const here = path?.length === 0;
  const below = (k: string | number) => (path && path[0] === k ? path.slice(1) : undefined);
  if (Array.isArray(v)) return `[${v.map((x, i) => literal(x, below(i), extra, field)).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const fields = Object.entries(v).map(([k, x]) => `${k}: ${literal(x, below(k), extra, k)}`);
    return `{${[...fields, ...(here ? [extra] : [])].join(', ')}}`;
  }
  if (typeof v === 'string' && field && ENUM_FIELDS.has(field)) return v;
  if (typeof v === 'string' && field === 'negated') return v;
  return JSON.stringify(v);
}

/** The operation with its input written in the document, `extra` added to the object at `path` of it. */
const inline = (op: (typeof OPERATIONS)[number], path: (string | number)[], extra: string) => op.query.replace(/\(\$i: \w+!\)/, '').replace('$i', literal(op.variables.i, path, extra));

describe('prototype keys and unknown fields are refused wherever they are, and nothing is written', () => {
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  // What a prototype key would bring in if it were read as the object's prototype.
  const smuggled = (op: (typeof OPERATIONS)[number]): Json => ({ immutable: true, cardinality: 'MULTIPLE', count: 1000, ...op.variables });

  for (const op of OPERATIONS) {
    test(`in ${op.name}'s variables, at every level`, async () => {
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        // `__proto__` in a JSON body is refused where every body enters (inputRules.ts), before GraphQL.
        const atTheDoor = (path: (string | number)[]) => ({ status: 400, code: 400, message: new RegExp(`^body\\.variables${printPath(path).replace(/^i/, '.i').replace(/[[\].$]/g, '\\$&')}: a field name is __proto__`) });
        // The variables object itself: `{"__proto__": {"i": …}}` was read as `$i`.
        const top = Object.defineProperty({}, key, { value: op.variables, enumerable: true });
        await expectRefused(() => post(body(op.query, top)), key === '__proto__' ? { status: 400, code: 400, message: /^body\.variables: a field name is __proto__/ } : { code: 'GRAPHQL_VALIDATION_FAILED', message: new RegExp(`^The variables hold a key "${key}"`) });
        for (const path of objectPaths(op.variables.i, ['i']).filter((p) => p.length > 0)) {
          const variables = withKey(op.variables, path, key, smuggled(op));
          await expectRefused(
            () => post(body(op.query, variables)),
            key === '__proto__'
              ? atTheDoor(path)
              : {
                  code: 'GRAPHQL_VALIDATION_FAILED',
                  message: new RegExp(`^Variable "\\$i" got invalid value at "${printPath([...path, key]).replace(/[[\].$]/g, '\\$&')}"; the key "${key}" names an object's prototype`),
                },
          );
        }
      }
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore, 'Object.prototype is as it was');
    });

    test(`in ${op.name}'s input written in the document, at every level`, async () => {
      for (const key of ['__proto__', 'constructor', 'prototype', 'notAField']) {
        for (const path of objectPaths(op.variables.i)) {
          await expectRefused(() => post(body(inline(op, path, `${key}: {immutable: true}`))), { code: 'GRAPHQL_VALIDATION_FAILED', message: new RegExp(`^Field "${key}" is not defined by type "\\w+"`) });
        }
      }
    });

    test(`unknown fields in ${op.name}'s variables, at every level`, async () => {
      for (const path of objectPaths(op.variables.i, ['i']).filter((p) => p.length > 0)) {
        const variables = withKey(op.variables, path, 'notAField', true);
        await expectRefused(() => post(body(op.query, variables)), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Variable "\$i" got invalid value .*; Field "notAField" is not defined by type "\w+"/ });
      }
    });
  }

  test('in the variables of a GET; variables nested deeper than any JSON body, by GET or POST', async () => {
    const query = 'query($u: String!) { entity(urn: $u) { urn } }';
    const get = (variables: string) => s.request(`/api/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(variables)}`);
    await expectRefused(() => get(`{"__proto__": {"u": "${DATASET}"}}`), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^The variables hold a key "__proto__"/ });
    await expectRefused(() => get(`{"u": {"constructor": {"prototype": 1}}}`), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Variable "\$u" got invalid value at "u.constructor"/ });
    const deep = `{"u": ${'['.repeat(200)}${']'.repeat(200)}}`;
    await expectRefused(() => get(deep), { code: 'GRAPHQL_VALIDATION_FAILED', message: /^Variable "\$u" got invalid value at "u\[0\][^"]*"; it nests deeper than 64 levels of objects and lists/ });
    // A POST's body is read by svc's JSON reader, which refuses it whole (HTTP 400, as any body nested so deeply).
    await expectRefused(() => post(`{"query": ${JSON.stringify(query)}, "variables": ${deep}}`), { status: 400, code: 400, message: /^body\.variables\.u(\[0\])+.*: nested deeper than 64 levels of objects and arrays/ });
  });

  test('the operations are accepted without the keys, by variables and written in the document', async () => {
    for (const op of OPERATIONS) {
      const answer = await expectAnswered(() => post(body(op.query, op.variables)));
      assert.equal(answer.errors, undefined, `${op.name}: ${JSON.stringify(answer.errors)}`);
    }
    const search = OPERATIONS.find((o) => o.name === 'searchAcrossEntities')!;
    const written = await expectAnswered(() => post(body(inline(search, ['nowhere'], ''))));
    assert.equal(written.errors, undefined, JSON.stringify(written.errors));
    // The property created without the smuggled fields is neither immutable nor MULTIPLE.
    const read = await expectAnswered(() => post(body(`{ structuredProperty(urn: "${propertyUrn('hostile.created')}") { definition { immutable cardinality } } }`)));
    assert.deepEqual(read.data, { structuredProperty: { definition: { immutable: false, cardinality: 'SINGLE' } } });
  });
});

/** The paths of every list in `v`. */
function listPaths(v: Json, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return [at, ...v.flatMap((x, i) => listPaths(x, [...at, i]))];
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => listPaths(x, [...at, k]));
}

/**
 * A copy of `v` with the list at `path` made of copies of its first item, `n` long or as many as
 * 4 MB of JSON hold (a body is at most 5 MB). Returns the copy and the list's length.
 */
function withLongList(v: Json, path: (string | number)[], n: number): [Json, number] {
  const copy = structuredClone(v);
  let parent = copy as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, Json>;
  const item = (parent[path[path.length - 1]!] as Json[])[0] ?? 'x';
  const length = Math.min(n, Math.floor(4_000_000 / (JSON.stringify(item).length + 1)));
  parent[path[path.length - 1]!] = Array.from({ length }, () => item);
  return [copy, length];
}

describe('a request asking for much work is refused before any is done, naming the limit', () => {
  const { listItems, facets: maxFacets, filterConditions, filterValues, reportedViolations } = GRAPHQL_INPUT_LIMITS;
  const op = (name: string) => OPERATIONS.find((o) => o.name === name)!;
  const bad = 400;

  for (const o of OPERATIONS) {
    test(`a list of more than ${listItems} items anywhere in ${o.name}'s variables`, async () => {
      for (const path of listPaths(o.variables)) {
        for (const n of [listItems + 1, 100_000]) {
          const [variables, length] = withLongList(o.variables, path, n);
          await expectRefused(() => post(body(o.query, variables)), {
            code: 'GRAPHQL_VALIDATION_FAILED',
            message: new RegExp(`^Variable "\\$i" got invalid value at "${printPath(path).replace(/[[\].$]/g, '\\$&')}"; a list may hold at most ${listItems} items, got ${length}$`),
          });
        }
      }
    });
  }

  test(`a list of more than ${listItems} items written in the document`, async () => {
    const urns = Array.from({ length: listItems + 1 }, () => `"${PROPERTY}"`).join(' ');
    await expectRefused(() => post(body(`mutation { removeStructuredProperties(input: {assetUrn: "${DATASET}", structuredPropertyUrns: [${urns}]}) { properties { associatedUrn } } }`)), {
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: new RegExp(`^A list in the query may hold at most ${listItems} items, got ${listItems + 1}$`),
    });
  });

  test(`more than ${maxFacets} facets`, async () => {
    const aggregate = op('aggregateAcrossEntities');
    for (const n of [maxFacets + 1, listItems]) {
      const variables = { i: { ...(aggregate.variables.i as Record<string, Json>), facets: Array.from({ length: n }, (_, k) => `structuredProperties.f${k}`) } };
      await expectRefused(() => post(body(aggregate.query, variables)), { code: bad, message: new RegExp(`^facets: at most ${maxFacets} facets, got ${n}$`) });
    }
    const written = `{ aggregateAcrossEntities(input: {query: "*", facets: [${Array.from({ length: maxFacets + 1 }, () => '"platform"').join(', ')}]}) { facets { field } } }`;
    await expectRefused(() => post(body(written)), { code: bad, message: new RegExp(`^facets: at most ${maxFacets} facets, got ${maxFacets + 1}$`) });
    const within = await expectAnswered(() => post(body(aggregate.query, { i: { ...(aggregate.variables.i as Record<string, Json>), facets: Array.from({ length: maxFacets }, () => 'platform') } })));
    assert.equal(within.errors, undefined, JSON.stringify(within.errors));
  });

  test(`filters of more than ${filterConditions} conditions or ${filterValues} values in all`, async () => {
    const search = op('searchAcrossEntities');
    const withFilters = (orFilters: Json) => ({ i: { ...(search.variables.i as Record<string, Json>), orFilters } });
    const condition = { field: 'platform', values: ['urn:li:dataPlatform:hive'] };
    for (const [groups, perGroup] of [
      [1, filterConditions + 1],
      [filterConditions + 1, 1],
      [50, 50],
    ] as const) {
      const filters = Array.from({ length: groups }, () => ({ and: Array.from({ length: perGroup }, () => condition) }));
      await expectRefused(() => post(body(search.query, withFilters(filters))), { code: bad, message: new RegExp(`^orFilters: at most ${filterConditions} conditions in all, got ${groups * perGroup}`) });
    }
    const values = (n: number) => Array.from({ length: n }, (_, k) => `urn:li:dataPlatform:p${k}`);
    // One condition's values are a list, held to the limit of any list; values are counted across conditions.
    for (const split of [
      [filterValues / 2, filterValues / 2 + 1],
      [filterValues / 4, filterValues / 4, filterValues / 4, filterValues / 4 + 1],
    ]) {
      const filters = [{ and: split.map((n) => ({ field: 'platform', values: values(n) })) }];
      await expectRefused(() => post(body(search.query, withFilters(filters))), { code: bad, message: new RegExp(`^orFilters: at most ${filterValues} values in all, got ${filterValues + 1}$`) });
    }
    const within = await expectAnswered(() => post(body(search.query, withFilters([{ and: [{ field: 'platform', values: values(filterValues) }] }]))));
    assert.equal(within.errors, undefined, JSON.stringify(within.errors));
  });

  test('an upsert naming many missing properties is refused with the first of them and how many more', async () => {
    const upsert = op('upsertStructuredProperties');
    const params = Array.from({ length: listItems }, (_, k) => ({ structuredPropertyUrn: propertyUrn(`hostile.missing${k}`), values: [{ stringValue: 'x' }] }));
    const errors = await expectRefused(() => post(body(upsert.query, { i: { assetUrn: DATASET, structuredPropertyInputParams: params } })), {
      code: 412,
      message: new RegExp(`^Structured property ${propertyUrn('hostile.missing0').replace(/\./g, '\\.')} does not exist: .*; … and ${(listItems - reportedViolations).toLocaleString('en-US')} more problems$`),
    });
    assert.equal((errors[0]!.extensions?.violations as string[]).length, reportedViolations);
  });

  test('variables of 250,000 integers too large to keep exactly: the first 20 are named, and the server lives on', async () => {
    // The JSON reader refuses them; a body of such integers once overflowed its stack and ended the process.
    const integers = Array.from({ length: 250_000 }, () => '9007199254740993').join(',');
    const errors = await expectRefused(() => post(`{"query": "query($a: [Float]) { __typename }", "variables": {"a": [${integers}]}}`), {
      status: 400,
      code: 400,
      message: /^body: the integer 9007199254740993 is beyond ±9007199254740991 and cannot be kept exactly/,
    });
    assert.equal((errors[0]!.extensions?.violations as string[]).length, reportedViolations);
  });

  test('a page or a facet larger than the limit is read as the limit, as DataHub reads a page', async () => {
    const search = op('searchAcrossEntities');
    const page = await expectAnswered(() => post(body(search.query, { i: { ...(search.variables.i as Record<string, Json>), count: 1_000_000_000 } })));
    assert.equal(page.errors, undefined, JSON.stringify(page.errors));
    const aggregate = op('aggregateAcrossEntities');
    const facets = await expectAnswered(() => post(body(aggregate.query, { i: { ...(aggregate.variables.i as Record<string, Json>), searchFlags: { maxAggValues: 1_000_000_000 } } })));
    assert.equal(facets.errors, undefined, JSON.stringify(facets.errors));
  });
});
