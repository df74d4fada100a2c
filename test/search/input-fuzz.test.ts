/**
 * Property-based probe of every REST route, every GraphQL root field, every operations action and the
 * Rest.li resources and actions DataHub's clients call, on both search backends:
 * generated requests put control characters, NULs, lone surrogates, prototype keys, huge and
 * overflowing numbers, deep nesting and malformed percent-encodings into path segments, query
 * parameters, body fields, field names and GraphQL variables; values at the extremes of size (arrays
 * of 10^5 elements, strings of 10 KB–4 MB, nesting of 10^4); and GraphQL requests generated from the
 * schema (support/graphqlDocuments.ts: any root field, selections walked from its type, fragments,
 * aliases, huge lists, prototype keys, unknown fields, deep documents). Whatever comes in, the server
 * answers below 500; a refusal carries a message (REST's JSON error, DataHub's empty 404 with its
 * reason, Rest.li's error, GraphQL's errors) and leaves the database unchanged; nothing it stores is
 * unreadable as jsonb; and afterwards the search outbox drains (nothing accepted is stuck) and the
 * server still answers.
 *
 * Seeded: the seed is printed, and SVC_FUZZ_SEED=<seed> replays a run. SVC_FUZZ_RUNS sets its length;
 * SVC_RELIABILITY_LONG=1 runs the long version (10,000 requests per backend).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fingerprint } from '../support/fingerprint.ts';
import { OPERATIONS_PATHS } from '../../server/src/api/rest/operationsRoutes.ts';
import { graphqlRequest, svcSchema } from '../support/graphqlDocuments.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { createProperty, datasetUrn, propertyUrn } from '../support/structuredProperties.ts';
import { ADMIN_TOKEN, enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';

const SEED = Number(process.env.SVC_FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? (process.env.SVC_RELIABILITY_LONG === '1' ? 10_000 : 600));

const DATASET = datasetUrn('fuzzed');
const PROPERTY = propertyUrn('fuzz.prop');

// ---- hostile pieces ----------------------------------------------------------------------------

const hostileText = fc.oneof(
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', '\u0001\u001f\u007f', ' ', '', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'urn:li:', 'urn:li:dataset:(', '\u202e\ufeff', 'urn:li:entityType:dataset', 'urn:li:entityType:svc.dataset', 'urn:li:dataType:datahub.string'),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 12 }),
  fc.integer({ min: 513, max: 3000 }).map((n) => `urn:li:tag:${'t'.repeat(n)}`),
);

/** Percent-encodings no decoder should choke on: truncated, non-hex, overlong, surrogates, beyond U+10FFFF. */
const oddEncoding = fc.constantFrom('%', '%Z', '%2', '%ZZ', '%%', '%00', 'a%00b', '%C0%80', '%ED%A0%80', '%F4%90%80%80', '%FF', '%E2%82', '%2F', '%25', '%3Fx%3D1', '%23');

/** A piece of text as it would appear in a URL: percent-encoded when it can be, else as odd encodings. */
const urlPiece = fc.oneof(
  hostileText.map((t) => (t.isWellFormed() ? encodeURIComponent(t) : encodeURIComponent(t.replace(/[\ud800-\udfff]/g, '')) + '%ED%A0%80')),
  oddEncoding,
);

/** JSON number literals a JavaScript number cannot hold exactly, or at all. */
const numberLiteral = fc.constantFrom('1e400', '-1e400', '9007199254740993', '-9223372036854775809', '123456789012345678901234567890', '1e300', '-0', '1e-400', '0.30000000000000004', '9007199254740991');

/** JSON texts at the extremes of size and depth (rare: each costs the server a large body). */
const extremeJson = fc.oneof(
  fc.constantFrom(100_000, 130_000).map((n) => `[${Array(n).fill('9007199254740993').join(',')}]`),
  fc.constantFrom(100_000, 300_000).map((n) => `[${Array(n).fill('{"a":1}').join(',')}]`),
  fc.constantFrom(10_000, 100_000).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`),
  fc.constantFrom(10_000, 1_000_000, 4_000_000).map((n) => JSON.stringify('x'.repeat(n))),
  fc.constantFrom(10_000, 100_000).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.constant(`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
);

/** A JSON text: a literal, a hostile string, deep nesting, a prototype key, or one at the extremes. */
const hostileJson = fc.oneof(
  { weight: 6, arbitrary: hostileText.map((t) => JSON.stringify(t)) },
  { weight: 6, arbitrary: numberLiteral },
  { weight: 6, arbitrary: fc.integer({ min: 60, max: 3000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`) },
  { weight: 6, arbitrary: fc.integer({ min: 60, max: 500 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`) },
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString').map((k) => `{${JSON.stringify(k)}:{"immutable":true,"removed":true}}`) },
  { weight: 1, arbitrary: extremeJson },
);

// ---- valid shapes to start from ----------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const ASPECT_VALUES: Record<string, Json> = {
  status: { removed: false },
  datasetProperties: { description: 'd', customProperties: { k: 'v' }, tags: ['t'] },
  structuredProperties: { properties: [{ propertyUrn: PROPERTY, values: [{ string: 'a' }, { double: 1.5 }] }] },
  datasetProfile: { timestampMillis: 1_700_000_000_000, rowCount: 10, fieldProfiles: [{ fieldPath: 'f' }] },
  subTypes: { typeNames: ['Table'] },
  propertyDefinition: { qualifiedName: 'fuzz.def', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'], allowedValues: [{ value: { string: 'a' } }] },
};

/** Every path into `v` (keys and values), as steps. */
function paths(v: Json, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

/** `v` as JSON text, with the value at `target` replaced by the text `replacement` (or its key, when `key`). */
function serialise(v: Json, target: (string | number)[], replacement: string, key: boolean, at: (string | number)[] = []): string {
  const here = at.length === target.length && at.every((x, i) => x === target[i]);
  if (here && !key) return replacement;
  if (Array.isArray(v)) return `[${v.map((x, i) => serialise(x, target, replacement, key, [...at, i])).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const members = Object.entries(v).map(([k, x]) => {
      const path = [...at, k];
      const isKey = key && path.length === target.length && path.every((p, i) => p === target[i]);
      return `${isKey ? replacement : JSON.stringify(k)}:${serialise(x, target, replacement, key, path)}`;
    });
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(v);
}

const bodyText = fc.oneof(
  // A valid body with one value (or field name) replaced by something hostile.
  fc.record({ aspect: fc.constantFrom(...Object.keys(ASPECT_VALUES)), wrap: fc.boolean(), pick: fc.nat(), key: fc.boolean(), hostile: hostileJson, keyText: hostileText }).map(({ aspect, wrap, pick, key, hostile, keyText }) => {
    const value = ASPECT_VALUES[aspect]!;
    const body: Json = wrap ? { value, systemMetadata: { runId: 'fuzz', properties: { a: 'b' } } } : value;
    const all = paths(body);
    const target = all[pick % all.length]!;
    return key && target.length > 0 ? serialise(body, target, JSON.stringify(keyText), true) : serialise(body, target, hostile, false);
  }),
  // Batches and patches with a hostile element.
  hostileJson.map((h) => `[{"urn":${h},"status":{"value":{"removed":false}}}]`),
  hostileJson.map((h) => `[{"urn":${JSON.stringify(DATASET)},"status":{"value":${h}}}]`),
  hostileJson.map((h) => `{"patch":[{"op":"add","path":"/properties/${PROPERTY}","value":{"propertyUrn":"${PROPERTY}","values":[{"string":${h}}]}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}`),
  hostileJson.map((h) => `{"patch":[{"op":"add","path":${h},"value":1}]}`),
  hostileJson.map((h) => `{"name":${h},"role":"reader"}`),
  // Not JSON at all.
  fc.constantFrom('', '{', '{"value":', 'null', '[]', '{}', '"x"', 'NaN', '{"a":1,}', '\u0000'),
);

// ---- GraphQL and operations bodies -------------------------------------------------------------

/** GraphQL operations of every root field, with their variables (replaced in part by hostile values). */
const GRAPHQL_OPS: { query: string; variables: Json }[] = [
  { query: 'query($urn: String!) { structuredProperty(urn: $urn) { urn exists definition { qualifiedName cardinality valueType { urn } } } }', variables: { urn: PROPERTY } },
  { query: 'query($urn: String!) { entity(urn: $urn) { urn type } dataset(urn: $urn) { name structuredProperties { properties { values { ... on StringValue { stringValue } } } } } }', variables: { urn: DATASET } },
  { query: 'query($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { start count total searchResults { entity { urn } } } }', variables: { input: { types: ['DATASET'], query: '*', start: 0, count: 5, orFilters: [{ and: [{ field: `structuredProperties.${PROPERTY}`, values: ['a'], condition: 'EQUAL' }] }] } } },
  { query: 'query($input: ScrollAcrossEntitiesInput!) { scrollAcrossEntities(input: $input) { nextScrollId count searchResults { entity { urn } } } }', variables: { input: { types: ['DATASET'], query: '*', count: 5, orFilters: [{ and: [{ field: 'platform', values: ['hive'] }] }] } } },
  { query: 'query($input: AggregateAcrossEntitiesInput!) { aggregateAcrossEntities(input: $input) { facets { field aggregations { value count } } } }', variables: { input: { types: ['DATASET'], query: '*', facets: [`structuredProperties.${PROPERTY}`] } } },
  { query: 'mutation($input: CreateStructuredPropertyInput!) { createStructuredProperty(input: $input) { urn } }', variables: { input: { qualifiedName: 'fuzz.gql', valueType: 'urn:li:dataType:svc.string', entityTypes: ['dataset'], cardinality: 'SINGLE', allowedValues: [{ stringValue: 'a' }] } } },
  { query: 'mutation($input: UpdateStructuredPropertyInput!) { updateStructuredProperty(input: $input) { urn } }', variables: { input: { urn: PROPERTY, displayName: 'x', newEntityTypes: ['dataFlow'], setCardinalityAsMultiple: true } } },
  { query: 'mutation($input: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $input) { properties { associatedUrn } } }', variables: { input: { assetUrn: DATASET, structuredPropertyInputParams: [{ structuredPropertyUrn: PROPERTY, values: [{ stringValue: 'b' }] }] } } },
  { query: 'mutation($input: RemoveStructuredPropertiesInput!) { removeStructuredProperties(input: $input) { properties { associatedUrn } } }', variables: { input: { assetUrn: DATASET, structuredPropertyUrns: [PROPERTY] } } },
  { query: 'mutation($input: DeleteStructuredPropertyInput!) { deleteStructuredProperty(input: $input) }', variables: { input: { urn: propertyUrn('fuzz.gql') } } },
];

/** Query texts no GraphQL server should fall over on: syntax errors, deep selections, many aliases, unknown fields. */
const hostileQuery = fc.oneof(
  fc.constantFrom('', '{', '}', 'query', 'mutation { }', '{ __typename }', '{ __schema { types { name } } }', '{ nope }', 'subscription { x }', '{ entity(urn: 1) { urn } }', 'query($u: String!) { entity(urn: $u) { urn } }', '{ ...F } fragment F on Query { ...F }'),
  fc.integer({ min: 20, max: 2000 }).map((n) => `{ entity(urn: "u") ${'{ urn '.repeat(n)}${'}'.repeat(n)} }`),
  fc.integer({ min: 50, max: 3000 }).map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: structuredProperty(urn: "${PROPERTY}") { urn }`).join(' ')} }`),
  hostileText,
);

/** A GraphQL request body: an operation with one variable (or key) replaced, a hostile query text, or not an operation at all. */
const graphqlBody = fc.oneof(
  graphqlRequest(svcSchema(), { urns: [DATASET, PROPERTY, propertyUrn('fuzz.gql'), 'urn:li:dataFlow:(airflow,fuzz,PROD)', 'urn:li:entityType:svc.dataset'], strings: ['', 'x', '__proto__', 'fuzz.gql', 'dataset', 'DATASET', '\u0000', 'a'.repeat(3000)] }),
  graphqlRequest(svcSchema(), { urns: [DATASET, PROPERTY], strings: ['*', 'fuzz', 'structuredProperties.fuzz.prop'] }),
  fc.record({ op: fc.nat(), pick: fc.nat(), key: fc.boolean(), hostile: hostileJson, keyText: hostileText, operationName: fc.option(hostileText, { freq: 5 }) }).map(({ op, pick, key, hostile, keyText, operationName }) => {
    const { query, variables } = GRAPHQL_OPS[op % GRAPHQL_OPS.length]!;
    const all = paths(variables);
    const target = all[pick % all.length]!;
    const vars = key && target.length > 0 ? serialise(variables, target, JSON.stringify(keyText), true) : serialise(variables, target, hostile, false);
    return `{"query":${JSON.stringify(query)},"variables":${vars}${operationName === null ? '' : `,"operationName":${JSON.stringify(operationName)}`}}`;
  }),
  fc.record({ op: fc.nat() }).map(({ op }) => JSON.stringify(GRAPHQL_OPS[op % GRAPHQL_OPS.length])),
  hostileQuery.map((q) => JSON.stringify({ query: q })),
  hostileJson.map((h) => `{"query":${h}}`),
  hostileJson.map((h) => `{"query":"{ __typename }","variables":${h}}`),
  fc.constantFrom('', '{', '[]', '[{"query":"{ __typename }"}]', 'null', '{}'),
);

const TRUNCATE: Json = { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 1_600_000_000_000, dryRun: true, batchSize: 100, timeoutSeconds: 60, forceDeleteByQuery: false, forceReindex: false };

/** A body of an operations action: T1's parameters or a task id, one value (or key) replaced. */
const operationsBody = fc.oneof(
  fc.record({ pick: fc.nat(), key: fc.boolean(), hostile: hostileJson, keyText: hostileText }).map(({ pick, key, hostile, keyText }) => {
    const all = paths(TRUNCATE);
    const target = all[pick % all.length]!;
    return key && target.length > 0 ? serialise(TRUNCATE, target, JSON.stringify(keyText), true) : serialise(TRUNCATE, target, hostile, false);
  }),
  hostileJson.map((h) => `{"task":${h}}`),
  fc.constantFrom('{"task":"svc:1"}', '{"task":"svc:999999999999999999999"}', '{"task":"node:1"}', '{}'),
  bodyText,
);

/** Rest.li proposals as DataHub's clients send them (the aspect a JSON string), one value or key replaced. */
const PROPOSAL: Json = {
  proposal: {
    entityType: 'dataset',
    entityUrn: DATASET,
    changeType: 'UPSERT',
    aspectName: 'structuredProperties',
    aspect: { value: JSON.stringify(ASPECT_VALUES.structuredProperties), contentType: 'application/json' },
    systemMetadata: { runId: 'fuzz', lastObserved: 1 },
  },
};
/** getTimeseriesAspectValues' and deleteReferences' bodies. */
const TIMESERIES_VALUES: Json = { urn: DATASET, entity: 'dataset', aspect: 'datasetProfile', startTimeMillis: 0, endTimeMillis: 1_900_000_000_000, limit: 10, latestValue: false };
const DELETE_REFERENCES: Json = { urn: 'urn:li:tag:fuzz', dryRun: true };
/** The search action as the clients find a domain by its name. */
const RESTLI_SEARCH: Json = { input: '*', entity: 'domain', start: 0, count: 10, filter: { or: [{ and: [{ field: 'name', values: ['fuzz'], condition: 'EQUAL' }] }] } };
/** The delete action as the CLI's `-a <aspect> --start-time … --end-time …` sends it (only this dataset's profiles). */
const DELETE_RANGE: Json = { urn: DATASET, aspectName: 'datasetProfile', startTimeMillis: 1_600_000_000_000, endTimeMillis: 1_600_000_000_001 };
/** A valid body with one place (a value, or a key) made hostile. */
const hostileIn = (valid: Json) =>
  fc.record({ pick: fc.nat(), key: fc.boolean(), hostile: hostileJson, keyText: hostileText }).map(({ pick, key, hostile, keyText }) => {
    const all = paths(valid);
    const target = all[pick % all.length]!;
    return key && target.length > 0 ? serialise(valid, target, JSON.stringify(keyText), true) : serialise(valid, target, hostile, false);
  });
const restliBody = fc.oneof(
  hostileIn(PROPOSAL),
  hostileIn(TIMESERIES_VALUES),
  hostileIn(DELETE_REFERENCES),
  hostileIn(RESTLI_SEARCH),
  hostileIn(DELETE_RANGE),
  // A hostile aspect inside the JSON string, and the change types and patches.
  fc.record({ aspect: fc.constantFrom(...Object.keys(ASPECT_VALUES)), text: bodyText, changeType: fc.constantFrom('UPSERT', 'CREATE', 'CREATE_ENTITY', 'PATCH', 'DELETE', 'RESTATE') }).map(({ aspect, text, changeType }) =>
    JSON.stringify({ proposal: { entityType: 'dataset', entityUrn: DATASET, changeType, aspectName: aspect, aspect: { value: text, contentType: 'application/json' } } }),
  ),
  hostileJson.map((h) => `{"proposals":[${h}]}`),
  hostileJson.map((h) => `{"urn":${h}}`),
);

// ---- requests ----------------------------------------------------------------------------------

const ENTITY_NAMES = ['dataset', 'structuredProperty', 'tag', 'dataFlow', 'DATASET'];
const URNS = [DATASET, PROPERTY, 'urn:li:tag:fuzz', 'urn:li:dataset:(urn:li:dataPlatform:hive,other,PROD)'];
const ASPECTS = [...Object.keys(ASPECT_VALUES), 'datasetKey', 'propertyDefinition'];
const CATEGORIES = ['TAG', 'owner', 'TAG,OWNERSHIP,DOCUMENTATION,LIFECYCLE,STRUCTURED_PROPERTY', 'technical-schema', 'RUN', '', '__proto__'];
const QUERY_NAMES = ['categories', 'startTime', 'endTime', 'raw', 'aspects', 'aspectNames', 'count', 'scrollId', 'sort', 'sortOrder', 'query', 'includeSoftDelete', 'systemMetadata', 'async', 'createIfNotExists', 'createIfEntityNotExists', 'version', 'clear', 'subject', 'kind', 'state', 'count[]', '__proto__'];

const segment = (valid: string[]) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...valid.map(enc)) }, { weight: 2, arbitrary: urlPiece });

const request = fc.record({
  route: fc.constantFrom('list', 'entity', 'aspect', 'tasks', 'task', 'tokens', 'token', 'health', 'timeseries', 'timeline', 'graphql', 'graphql', 'operations', 'operations', 'taskStatus', 'restliAspect', 'restliIngest', 'restliIngest', 'restliEntities', 'restliEntityV2', 'restliEntitiesV2'),
  restliAction: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('ingestProposal', 'ingestProposalBatch', 'getTimeseriesAspectValues', 'delete', 'deleteReferences', 'search') }, { weight: 1, arbitrary: urlPiece }),
  restliBody,
  action: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('truncateTimeseriesAspect', 'getEsTaskStatus', 'getIndexSizes') }, { weight: 1, arbitrary: urlPiece }),
  operationsPath: fc.constantFrom(...OPERATIONS_PATHS),
  graphqlBody,
  operationsBody,
  version: fc.constantFrom('v2', 'v3'),
  entityName: segment(ENTITY_NAMES),
  urn: segment(URNS),
  aspect: segment(ASPECTS),
  category: segment(CATEGORIES),
  id: segment(['1', '42']),
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT'),
  query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), urlPiece), fc.oneof(fc.constantFrom('true', 'false', '0', '10', '1e9', 'ASCENDING', ''), urlPiece)), { maxLength: 3 }),
  body: fc.option(bodyText, { freq: 4 }),
  contentType: fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('application/json-patch+json', 'text/plain', undefined) }),
  token: fc.constantFrom(ADMIN_TOKEN, ADMIN_TOKEN, ADMIN_TOKEN, ADMIN_TOKEN, ADMIN_TOKEN, ADMIN_TOKEN, 'wrong', null),
});

type Request = typeof request extends fc.Arbitrary<infer R> ? R : never;

function pathOf(r: Request): string {
  const e = `/openapi/${r.version}/entity/${r.entityName}`;
  switch (r.route) {
    case 'list':
      return e;
    case 'entity':
      return `${e}/${r.urn}`;
    case 'aspect':
      return `${e}/${r.urn}/${r.aspect}`;
    case 'tasks':
      return '/api/tasks';
    case 'task':
      return `/api/tasks/${r.id}`;
    case 'tokens':
      return '/api/tokens';
    case 'token':
      return `/api/tokens/${r.id}`;
    case 'timeseries':
      return `/openapi/v2/timeseries/${r.entityName}/${r.aspect}`;
    case 'timeline':
      return `/openapi/v2/timeline/v1/${r.urn}?categories=${r.category}`;
    case 'graphql':
      return '/api/graphql';
    case 'operations':
      return `${r.operationsPath}?action=${r.action}`;
    case 'taskStatus':
      return `/openapi/operations/elasticSearch/getTaskStatus?task=${r.id}`;
    case 'restliAspect':
      return `/aspects/${r.urn}?aspect=${r.aspect}&version=0`;
    case 'restliIngest':
      return `/aspects?action=${r.restliAction}`;
    case 'restliEntities':
      return `/entities?action=${r.restliAction}`;
    case 'restliEntityV2':
      return `/entitiesV2/${r.urn}?aspects=List(${r.aspect},${r.aspect})`;
    case 'restliEntitiesV2':
      return `/entitiesV2?ids=List(${r.urn},${r.urn})&aspects=List(${r.aspect})`;
    default:
      return '/ready';
  }
}

for (const backend of searchBackends()) {
  describe(`on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
      await createProperty(s, 'fuzz.prop', { cardinality: 'MULTIPLE' });
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    });
    after(async () => {
      await s?.close();
    });

test(`generated hostile requests to every REST route, GraphQL field, Rest.li and operations action: no 5xx, refusals change nothing, the outbox drains (seed ${SEED}, ${RUNS} runs)`, { timeout: RUNS > 2_000 ? 3_600_000 : 900_000 }, async () => {
      process.stdout.write(`# input-fuzz seed ${SEED}: replay with SVC_FUZZ_SEED=${SEED}\n`);
      const statuses = new Map<number, number>();
      const routes = new Map<string, number>();
      let graphqlRefusals = 0;
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const path = pathOf(r);
          const query = r.query.map(([k, v]) => `${k}=${v}`).join('&');
          const url = `${s.url}${path}${query ? `${path.includes('?') ? '&' : '?'}${query}` : ''}`;
          // GraphQL and the operations actions are POSTs with bodies of their own (a GET of GraphQL stays a GET).
          const restli = r.route.startsWith('restli');
          const special = r.route === 'graphql' || r.route === 'operations' || r.route === 'restliIngest' || r.route === 'restliEntities';
          const method = special && r.method !== 'GET' ? 'POST' : r.method;
          const text = r.route === 'graphql' ? r.graphqlBody : r.route === 'operations' ? r.operationsBody : r.route === 'restliIngest' || r.route === 'restliEntities' ? r.restliBody : r.body;
          const headers: Record<string, string> = {};
          if (r.token !== null) headers.authorization = `Bearer ${r.token}`;
          if (r.contentType !== undefined) headers['content-type'] = r.contentType;
          const body = method === 'GET' || method === 'HEAD' || text === null ? undefined : Buffer.from(text, 'utf8');
          const before = await fingerprint(s.databaseUrl);
          const res = await fetch(url, { method, headers, body });
          const raw = await res.text();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          routes.set(r.route, (routes.get(r.route) ?? 0) + 1);
          const what = `${method} ${url} ${r.contentType ?? ''} ${text?.slice(0, 300) ?? ''} → ${res.status} ${raw.slice(0, 300)}`;
          assert.ok(res.status < 500, what);
          if (res.status >= 400) {
            if (method !== 'HEAD' && !(res.status === 404 && raw === '' && res.headers.get('not-found-reason'))) {
              // REST errors are {"error", "message"}; Rest.li's (the operations actions) {"message", "status"}; GraphQL's {"errors": [{"message"}]}.
              const parsed = JSON.parse(raw) as { error?: unknown; message?: unknown; errors?: { message?: unknown }[] };
              if ((r.route === 'operations' || restli) && res.headers.get('x-restli-error-response')) assert.equal(typeof parsed.message, 'string', what);
              else if (parsed.errors) assert.ok(parsed.errors.length > 0 && parsed.errors.every((e) => typeof e.message === 'string' && e.message !== ''), what);
              else assert.equal(typeof parsed.error, 'string', what);
            }
            assert.equal(await fingerprint(s.databaseUrl), before, `the database changed: ${what}`);
          } else if (r.route === 'graphql' && res.status === 200) {
            // GraphQL refuses with 200 and errors (as DataHub does): each says why, and a refused operation changed nothing.
            const parsed = JSON.parse(raw) as { errors?: { message?: unknown }[] };
            if (parsed.errors?.length) {
              graphqlRefusals++;
              assert.ok(parsed.errors.every((e) => typeof e.message === 'string' && e.message !== ''), what);
              assert.equal(await fingerprint(s.databaseUrl), before, `the database changed: ${what}`);
            }
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
      );
      process.stdout.write(`# input-fuzz statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}; GraphQL refusals (200 with errors): ${graphqlRefusals}\n`);
      process.stdout.write(`# input-fuzz routes: ${JSON.stringify(Object.fromEntries([...routes].sort()))}\n`);
      // Some generated requests are valid: the probe reached the write path, not only the door.
      assert.ok([...statuses.keys()].some((st) => st >= 200 && st < 300), 'no request succeeded');
      const unreadable = await sql<{ n: number }>(
        s.databaseUrl,
        `SELECT (SELECT count(*) FROM aspects WHERE NOT svc_jsonb_readable(metadata))
              + (SELECT count(*) FROM timeseries_entries WHERE NOT svc_jsonb_readable(metadata))::int AS n`,
      );
      assert.equal(unreadable[0]!.n, 0, 'a stored value cannot be read as jsonb');
      // Whatever was accepted reaches search: nothing is stuck in the outbox.
      await s.svc.catalog.searchOutbox.deliverAll(60_000);
      const [waiting] = await sql<{ outbox: number; failing: number }>(s.databaseUrl, 'SELECT (SELECT count(*) FROM search_outbox)::int AS outbox, (SELECT count(*) FROM search_failures)::int AS failing');
      assert.deepEqual(waiting, { outbox: 0, failing: 0 }, 'changes still wait in the search outbox, or fail delivery, after delivery');
      assert.equal((await s.request('/health')).status, 200);
    });
  });
}
