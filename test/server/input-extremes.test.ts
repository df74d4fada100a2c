/**
 * Inputs at the extremes of size, on every route that takes a JSON body: arrays of 10^5–10^6
 * elements (integers beyond 2^53 among them), maps of 10^5 keys, strings of 10 KB–4 MB, and nesting
 * 10^4–10^5 deep, each as the whole body and in the place of a value inside a valid body. A body of
 * 130,000 integers beyond 2^53 once overflowed the stack in a stream's callback and ended the
 * process; a million invalid list items took 11 s of CPU and answered a 23 MB error.
 *
 * Whatever is sent: the answer is below 500, a refusal says what was wrong in a body of bounded
 * size, nothing changed, and the server still answers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprint } from '../support/fingerprint.ts';
import { createProperty, datasetUrn, propertyUrn } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
const DATASET = datasetUrn('extremes');
const PROPERTY = propertyUrn('extremes.prop');

before(async () => {
  s = await startTestServer();
  await createProperty(s, 'extremes.prop', { cardinality: 'MULTIPLE' });
  await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
});
after(async () => {
  await s.close();
});

/** A JSON text of a size or depth at the extremes; `hole` marks where a value sits in a valid body. */
const SHAPES: Record<string, () => string> = {
  'array of 130,000 integers beyond 2^53': () => `[${Array(130_000).fill('9007199254740993').join(',')}]`,
  'array of 1,000,000 integers beyond 2^53 (17 MB: over the body limit)': () => `[${Array(1_000_000).fill('9007199254740993').join(',')}]`,
  'array of 1,000,000 small integers': () => `[${Array(1_000_000).fill('5').join(',')}]`,
  'array of 300,000 objects': () => `[${Array(300_000).fill('{"a":1}').join(',')}]`,
  'map of 100,000 keys': () => `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":1`).join(',')}}`,
  'string of 10 KB': () => JSON.stringify('x'.repeat(10_000)),
  'string of 1 MB of 3-byte characters': () => JSON.stringify('€'.repeat(350_000)),
  'string of 4 MB': () => JSON.stringify('y'.repeat(4_000_000)),
  'arrays nested 10,000 deep': () => `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  'arrays nested 100,000 deep': () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  'objects nested 10,000 deep': () => `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
  'integers beyond 2^53 in objects nested 1,000 deep': () => `${'{"a":[9007199254740993,'.repeat(1_000)}1${']}'.repeat(1_000)}`,
};

const HOLE = '"__HOLE__"';
const proposal = (aspectName: string, value: string) => JSON.stringify({ proposal: { entityType: 'dataset', entityUrn: DATASET, changeType: 'UPSERT', aspectName, aspect: { value, contentType: 'application/json' } } });

/** Every route that takes a JSON body: its method and path, and a valid body with a hole where a value goes. */
const ROUTES: { name: string; method: string; path: string; body: string; contentType?: string }[] = [
  { name: 'v3 aspect', method: 'POST', path: `/openapi/v3/entity/dataset/${enc(DATASET)}/datasetProperties?createIfNotExists=false`, body: `{"value":{"description":${HOLE}}}` },
  { name: 'v2 aspect', method: 'POST', path: `/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`, body: `{"properties":[{"propertyUrn":"${PROPERTY}","values":${HOLE}}]}` },
  { name: 'v3 batch', method: 'POST', path: '/openapi/v3/entity/dataset', body: `[{"urn":"${DATASET}","datasetProperties":{"value":{"customProperties":${HOLE}}}}]` },
  { name: 'v2 batch', method: 'POST', path: '/openapi/v2/entity/dataset', body: `[{"urn":"${DATASET}","aspects":{"datasetProperties":{"value":{"tags":${HOLE}}}}}]` },
  { name: 'v3 patch', method: 'PATCH', path: `/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties`, body: `{"patch":[{"op":"add","path":"/properties/${PROPERTY}","value":{"propertyUrn":"${PROPERTY}","values":${HOLE}}}],"arrayPrimaryKeys":{"properties":["propertyUrn"]}}`, contentType: 'application/json-patch+json' },
  { name: 'v3 definition', method: 'POST', path: `/openapi/v3/entity/structuredProperty/${enc(propertyUrn('extremes.other'))}/propertyDefinition`, body: `{"value":{"qualifiedName":"extremes.other","valueType":"urn:li:dataType:datahub.string","entityTypes":["urn:li:entityType:datahub.dataset"],"allowedValues":${HOLE}}}` },
  { name: 'Rest.li ingestProposal', method: 'POST', path: '/aspects?action=ingestProposal', body: `{"proposal":{"entityType":"dataset","entityUrn":"${DATASET}","changeType":"UPSERT","aspectName":"status","aspect":{"value":${HOLE},"contentType":"application/json"}}}` },
  { name: 'Rest.li ingestProposalBatch', method: 'POST', path: '/aspects?action=ingestProposalBatch', body: `{"proposals":${HOLE}}` },
  { name: 'Rest.li getTimeseriesAspectValues', method: 'POST', path: '/aspects?action=getTimeseriesAspectValues', body: `{"urn":"${DATASET}","entity":"dataset","aspect":"datasetProfile","limit":${HOLE}}` },
  { name: 'Rest.li delete', method: 'POST', path: '/entities?action=delete', body: `{"urn":${HOLE}}` },
  { name: 'Rest.li deleteReferences', method: 'POST', path: '/entities?action=deleteReferences', body: `{"urn":"${DATASET}","dryRun":${HOLE}}` },
  { name: 'operations truncate', method: 'POST', path: '/operations?action=truncateTimeseriesAspect', body: `{"entityType":"dataset","aspect":"datasetProfile","endTimeMillis":1,"dryRun":true,"batchSize":${HOLE}}` },
  { name: 'tokens', method: 'POST', path: '/api/tokens', body: `{"name":${HOLE},"role":"reader"}` },
  { name: 'GraphQL variables', method: 'POST', path: '/api/graphql', body: `{"query":"query($u: String!) { entity(urn: $u) { urn } }","variables":{"u":${HOLE}}}` },
];

/** The largest refusal body svc sends: the first violations and a count, whatever the input's size. */
const MAX_ERROR_BODY = 32 * 1024;

test('inputs at the extremes of size and depth, on every JSON route, as the whole body and as a value: below 500, a bounded refusal, nothing changed, the server alive', { timeout: 900_000 }, async () => {
  const seen = new Map<number, number>();
  // What is stored, as of the last request (an accepted write changes it; a refusal must not).
  let stored = await fingerprint(s.databaseUrl);
  for (const [shape, make] of Object.entries(SHAPES)) {
    const json = make();
    for (const route of ROUTES) {
      for (const where of ['body', 'value'] as const) {
        const body = where === 'body' ? json : route.body.replace(HOLE, () => json);
        // A value inside a proposal's aspect is itself a JSON string, as DataHub's clients send it.
        const sent = where === 'value' && route.name === 'Rest.li ingestProposal' ? proposal('status', json) : body;
        const what = `${route.name}, ${shape} as the ${where}`;
        const res = await s.request(route.path, { method: route.method, body: sent, headers: { 'content-type': route.contentType ?? 'application/json' } });
        const raw = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        if (res.status < 300) process.stdout.write(`# accepted: ${what}\n`);
        assert.ok(res.status < 500, `${what}: ${res.status} ${raw.slice(0, 300)}`);
        assert.ok(raw.length <= MAX_ERROR_BODY || res.status < 300, `${what}: a refusal of ${raw.length} bytes`);
        if (res.status >= 400) {
          assert.match(raw, /"message"|"errors"/, `${what}: the refusal says why: ${raw.slice(0, 300)}`);
          assert.equal(await fingerprint(s.databaseUrl), stored, `${what}: a refusal changed the database`);
        } else stored = await fingerprint(s.databaseUrl);
        const health = await s.request('/health');
        assert.equal(health.status, 200, `${what}: the server no longer answers`);
      }
    }
  }
  process.stdout.write(`# input-extremes statuses: ${JSON.stringify(Object.fromEntries(seen))}\n`);
  // The extremes reached the rules, not only the size limit.
  assert.ok((seen.get(400) ?? 0) > 0 && (seen.get(413) ?? 0) > 0, JSON.stringify(Object.fromEntries(seen)));
});

test('a request naming 10,000 missing properties is refused with the first 20 and a count, in a bounded answer (it was 4 MB)', async () => {
  const properties = Array.from({ length: 10_000 }, (_, i) => ({ propertyUrn: propertyUrn(`extremes.missing.p${i}`), values: [{ string: 'a' }] }));
  const before = await fingerprint(s.databaseUrl);
  const res = await s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`, { method: 'POST', body: JSON.stringify({ properties }) });
  const raw = await res.text();
  assert.equal(res.status, 412, raw.slice(0, 300));
  assert.ok(raw.length < MAX_ERROR_BODY, `${raw.length} bytes`);
  assert.match(JSON.parse(raw).message, /extremes\.missing\.p0 does not exist.*; … and 9,980 more problems$/);
  assert.equal(await fingerprint(s.databaseUrl), before);
});
