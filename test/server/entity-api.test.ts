/**
 * The OpenAPI v2 and v3 entity endpoints: the shapes of datahub-behaviour.md §5 for status, datasetKey,
 * propertyDefinition and structuredProperties, decimals in the raw text, versions, listing, deletes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { retentionTimeDefinition } from '../support/structuredProperties.ts';
import { expectRejected, expectValidationError } from '../support/expectRejected.ts';
import { enc, sql, startTestServer, text, type TestServer, expectMissing } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const PROP = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,SampleHiveDataset,PROD)';
const definition = retentionTimeDefinition('io.acryl.privacy.retentionTime');

describe('propertyDefinition', () => {
  test('v3 POST answers {urn, propertyDefinition: {value}} with decimals in the raw text', async () => {
    const res = await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP)}/propertyDefinition?createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ value: definition }),
    });
    const raw = await text(res, 200);
    assert.deepEqual(JSON.parse(raw), { urn: PROP, propertyDefinition: { value: definition } });
    assert.match(raw, /\{"double":30\.0\}.*\{"double":60\.0\}.*\{"double":365\.0\}/);
  });

  test('v2 GET answers {value} with exactly what was stored, fields in the order written', async () => {
    const raw = await text(await s.request(`/openapi/v2/entity/structuredProperty/${enc(PROP)}/propertyDefinition`), 200);
    assert.equal(raw, JSON.stringify({ value: definition }).replace(/"double":(\d+)\}/g, '"double":$1.0}'));
  });

  test('v3 GET answers {urn, propertyDefinition: {value}}', async () => {
    const raw = await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP)}/propertyDefinition`), 200);
    assert.deepEqual(JSON.parse(raw), { urn: PROP, propertyDefinition: { value: definition } });
    assert.match(raw, /"double":60\.0/);
  });

  test('the key aspect is derived from the urn', async () => {
    const res = await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP)}/structuredPropertyKey`);
    assert.deepEqual(JSON.parse(await text(res, 200)), { urn: PROP, structuredPropertyKey: { value: { id: 'io.acryl.privacy.retentionTime' } } });
  });
});

const PROP02 = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime02';

describe('structuredProperties values', () => {
  before(async () => {
    // The seed's second property (a string with allowed values) and the dataset must exist first.
    const def02 = {
      qualifiedName: 'io.acryl.privacy.retentionTime02',
      valueType: 'urn:li:dataType:svc.string',
      cardinality: 'SINGLE',
      entityTypes: ['urn:li:entityType:svc.dataset'],
      allowedValues: [{ value: { string: 'foo2' }, description: 'foo2 value' }, { value: { string: 'bar2' }, description: 'bar2 value' }],
    };
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP02)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: def02 }) }), 200);
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
  });

  test('v3 POST sets them and answers {urn, structuredProperties: {value}}', async () => {
    const value = { properties: [{ propertyUrn: PROP, values: [{ double: 60 }] }] };
    const res = await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties?createIfNotExists=false`, {
      method: 'POST',
      body: '{"value":{"properties":[{"propertyUrn":"' + PROP + '","values":[{"double":60.0}]}]}}',
    });
    const raw = await text(res, 200);
    assert.deepEqual(JSON.parse(raw), { urn: DATASET, structuredProperties: { value } });
    assert.match(raw, /"values":\[\{"double":60\.0\}\]/);
  });

  test('v2 PATCH add upserts one property and answers {urn, aspects: {structuredProperties: {value}}}', async () => {
    const other = PROP02;
    const res = await s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json-patch+json', accept: 'application/json' },
      body: JSON.stringify({
        patch: [{ op: 'add', path: `/properties/${other}`, value: { propertyUrn: other, values: [{ string: 'bar2' }] } }],
        arrayPrimaryKeys: { properties: ['propertyUrn'] },
      }),
    });
    const raw = await text(res, 200);
    assert.deepEqual(JSON.parse(raw), {
      urn: DATASET,
      aspects: {
        structuredProperties: {
          value: {
            properties: [
              { propertyUrn: PROP, values: [{ double: 60 }] },
              { propertyUrn: other, values: [{ string: 'bar2' }] },
            ],
          },
        },
      },
    });
    assert.match(raw, /"double":60\.0/);
  });

  test('v3 PATCH add on an existing key replaces its values, remove drops it', async () => {
    const patch = (ops: unknown[]) =>
      s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json-patch+json' },
        body: JSON.stringify({ patch: ops, arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
      });
    const replaced = JSON.parse(await text(await patch([{ op: 'add', path: `/properties/${PROP}`, value: { propertyUrn: PROP, values: [{ double: 30 }, { double: 60 }] } }]), 200));
    assert.deepEqual(replaced.structuredProperties.value.properties[0], { propertyUrn: PROP, values: [{ double: 30 }, { double: 60 }] });
    assert.equal(replaced.structuredProperties.value.properties.length, 2);
    const removed = JSON.parse(await text(await patch([{ op: 'remove', path: '/properties/urn:li:structuredProperty:io.acryl.privacy.retentionTime02' }]), 200));
    assert.deepEqual(removed, { urn: DATASET, structuredProperties: { value: { properties: [{ propertyUrn: PROP, values: [{ double: 30 }, { double: 60 }] }] } } });
  });

  test('doubles that JSON writes with an exponent read back with a decimal point, as Java writes them', async () => {
    const p = 'urn:li:structuredProperty:test.doubles.exponents';
    const def = { qualifiedName: 'test.doubles.exponents', valueType: 'urn:li:dataType:svc.number', cardinality: 'MULTIPLE', entityTypes: ['urn:li:entityType:svc.dataset'] };
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: def }) }), 200);
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,doubleExponents,PROD)';
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    const body = `{"value":{"properties":[{"propertyUrn":"${p}","values":[{"double":1e21},{"double":1e-7},{"double":-2.5E-8}]}]}}`;
    const written = `[{"double":1.0E21},{"double":1.0E-7},{"double":-2.5E-8}]`;
    assert.ok((await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body }), 200)).includes(written));
    for (const v of ['v2', 'v3']) {
      const raw = await text(await s.request(`/openapi/${v}/entity/dataset/${enc(urn)}/structuredProperties`), 200);
      assert.ok(raw.includes(written), raw);
    }
  });

  test('PATCH of an entity without the aspect starts from {"properties": []}', async () => {
    const urn = 'urn:li:dataFlow:(airflow,patched_flow,prod)';
    await text(await s.request(`/openapi/v3/entity/dataFlow/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    const res = await s.request(`/openapi/v3/entity/dataFlow/${enc(urn)}/structuredProperties`, {
      method: 'PATCH',
      body: JSON.stringify({ patch: [{ op: 'add', path: `/properties/${PROP}`, value: { propertyUrn: PROP, values: [{ double: 365 }] } }], arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
    });
    assert.deepEqual(JSON.parse(await text(res, 200)), { urn, structuredProperties: { value: { properties: [{ propertyUrn: PROP, values: [{ double: 365 }] }] } } });
  });
});

describe('status', () => {
  test('v2 POST takes the bare aspect; v3 POST the {value} wrapper', async () => {
    const v2 = await s.request(`/openapi/v2/entity/structuredProperty/${enc(PROP)}/status?systemMetadata=false&createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ removed: true }),
    });
    assert.deepEqual(JSON.parse(await text(v2, 200)), { urn: PROP, aspects: { status: { value: { removed: true } } } });
    const v3 = await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP)}/status?systemMetadata=false&createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ value: { removed: false } }),
    });
    assert.deepEqual(JSON.parse(await text(v3, 200)), { urn: PROP, status: { value: { removed: false } } });
  });
});

describe('versions and system metadata', () => {
  test('every write keeps the replaced version; version 0 is the latest', async () => {
    const urn = 'urn:li:tag:versioned';
    for (const removed of [true, false, true]) {
      await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) }), 200);
    }
    const at = async (version: number) =>
      JSON.parse(await text(await s.request(`/openapi/v2/entity/tag/${enc(urn)}/status?version=${version}`), 200)).value;
    assert.deepEqual(await at(0), { removed: true });
    assert.deepEqual(await at(1), { removed: true });
    assert.deepEqual(await at(2), { removed: false });
    await expectMissing(s.request(`/openapi/v2/entity/tag/${enc(urn)}/status?version=3`));
  });

  test('system metadata and audit stamps appear only with systemMetadata=true', async () => {
    const urn = 'urn:li:tag:with-run';
    await text(
      await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?createIfNotExists=false`, {
        method: 'POST',
        body: JSON.stringify({ value: { removed: false }, systemMetadata: { runId: 'ingest-42' } }),
      }),
      200,
    );
    const plain = JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}?aspects=status`), 200));
    assert.deepEqual(plain, { urn, status: { value: { removed: false } } });
    const withSm = JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}?aspects=status&systemMetadata=true`), 200));
    assert.equal(withSm.status.systemMetadata.runId, 'ingest-42');
    assert.equal(typeof withSm.status.systemMetadata.lastObserved, 'number');
    assert.equal(withSm.status.auditStamp.actor, 'urn:li:corpuser:admin');
  });
});

describe('list', () => {
  test('v3 list returns the requested aspects, datasetKey derived from the urn', async () => {
    const res = await s.request('/openapi/v3/entity/dataset?systemMetadata=false&aspects=datasetKey&aspects=structuredProperties&count=10&sort=urn&sortOrder=ASCENDING');
    const raw = await text(res, 200);
    const body = JSON.parse(raw);
    const entity = body.entities.find((e: { urn: string }) => e.urn === DATASET);
    assert.deepEqual(entity.datasetKey, { value: { platform: 'urn:li:dataPlatform:hive', name: 'SampleHiveDataset', origin: 'PROD' } });
    // The key's fields come in URN order, as the key aspect is defined.
    assert.ok(raw.includes('"datasetKey":{"value":{"platform":"urn:li:dataPlatform:hive","name":"SampleHiveDataset","origin":"PROD"}}'), raw);
    assert.deepEqual(Object.keys(entity).sort(), ['datasetKey', 'structuredProperties', 'urn']);
    assert.equal(body.scrollId, null);
  });

  test('pages with scrollId in urn order, both directions, v2 under "results"', async () => {
    const urns = Array.from({ length: 7 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:kafka,topic_${i},PROD)`);
    const batch = await s.request('/openapi/v2/entity/dataset?async=false', {
      method: 'POST',
      body: JSON.stringify(urns.map((urn) => ({ urn, aspects: { status: { value: { removed: false } } } }))),
    });
    assert.equal(batch.status, 200);
    const seen: string[] = [];
    let scrollId: string | null = null;
    do {
      const q: string = `/openapi/v2/entity/dataset?count=3&aspects=datasetKey${scrollId ? `&scrollId=${scrollId}` : ''}`;
      const page = JSON.parse(await text(await s.request(q), 200));
      assert.ok(page.results.length <= 3);
      for (const r of page.results) {
        assert.ok(r.aspects.datasetKey.value.name);
        seen.push(r.urn);
      }
      scrollId = page.scrollId;
      // The last page has none, as DataHub's v2 (its clients page until the key is absent).
      if (!scrollId) assert.equal('scrollId' in page, false);
    } while (scrollId);
    assert.deepEqual(seen, [...seen].sort());
    for (const urn of urns) assert.ok(seen.includes(urn));
    const desc = JSON.parse(await text(await s.request('/openapi/v3/entity/dataset?count=100&sortOrder=DESCENDING'), 200));
    const descUrns = desc.entities.map((e: { urn: string }) => e.urn);
    assert.deepEqual(descUrns, [...seen].reverse());
  });

  test('soft-deleted entities are left out unless includeSoftDelete=true', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:kafka,soft_gone,PROD)';
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":true}}' }), 200);
    const listed = async (q: string) => JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset?count=1000${q}`), 200)).entities.map((e: { urn: string }) => e.urn);
    assert.ok(!(await listed('')).includes(urn));
    assert.ok((await listed('&includeSoftDelete=true')).includes(urn));
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'HEAD' })).status, 404);
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}?includeSoftDelete=true`, { method: 'HEAD' })).status, 204);
  });
});

describe('batch, head, delete', () => {
  test('v2 async batch answers 202 [{"urn"}]; v3 sync batch answers the written entities', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,batch_one,PROD)';
    const v2 = await s.request('/openapi/v2/entity/dataset', { method: 'POST', body: JSON.stringify([{ urn, aspects: { status: { value: { removed: false } } } }]) });
    assert.deepEqual(JSON.parse(await text(v2, 202)), [{ urn }]);
    const v3 = await s.request('/openapi/v3/entity/dataset?async=false', {
      method: 'POST',
      body: JSON.stringify([{ urn, status: { value: { removed: false } }, subTypes: { value: { typeNames: ['table'] } } }]),
    });
    assert.deepEqual(JSON.parse(await text(v3, 200)), [{ urn, status: { value: { removed: false } }, subTypes: { value: { typeNames: ['table'] } } }]);
  });

  test('an empty batch writes nothing and answers an empty list (a fuzzed request once made it a 500)', async () => {
    for (const path of ['/openapi/v3/entity/dataset', '/openapi/v3/entity/dataset?async=false', '/openapi/v2/entity/dataset']) {
      const res = await s.request(path, { method: 'POST', body: '[]' });
      assert.ok(res.status === 200 || res.status === 202, `${path}: ${res.status}`);
      assert.deepEqual(await res.json(), []);
    }
  });

  test('a missing entity is 404 with an empty body and Not-Found-Reason; HEAD is 204 or 404', async () => {
    const missing = 'urn:li:dataset:(urn:li:dataPlatform:hive,nowhere,PROD)';
    const res = await s.request(`/openapi/v3/entity/dataset/${enc(missing)}`);
    assert.equal(res.status, 404);
    assert.equal(res.headers.get('not-found-reason'), 'ENTITY');
    assert.equal(await res.text(), '');
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(missing)}`, { method: 'HEAD' })).status, 404);
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}`, { method: 'HEAD' })).status, 204);
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties`, { method: 'HEAD' })).status, 204);
    assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/schemaMetadata`, { method: 'HEAD' })).status, 404);
  });

  test('DELETE of an entity removes everything and answers 200 with an empty body, also when missing', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,to_delete,PROD)';
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    const del = await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' });
    assert.equal(await text(del, 200), '');
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(urn)}`));
    assert.equal(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' }), 200), '');
  });

  test('DELETE of an aspect removes only it', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,aspect_delete,PROD)';
    await s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify([{ urn, status: { value: { removed: false } }, subTypes: { value: { typeNames: ['view'] } } }]) });
    assert.equal(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/subTypes`, { method: 'DELETE' }), 200), '');
    const entity = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`), 200));
    assert.deepEqual(Object.keys(entity).sort(), ['datasetKey', 'status', 'urn']);
  });
});

describe('names, preconditions, time series', () => {
  test('entity and aspect names match case-insensitively', async () => {
    const res = await s.request(`/openapi/v3/entity/DATASET/${enc(DATASET)}/STRUCTUREDPROPERTIES`);
    const body = JSON.parse(await text(res, 200));
    assert.ok(body.structuredProperties.value.properties.length > 0);
    assert.equal((await s.request(`/openapi/v3/entity/structuredproperty/${enc(PROP)}/propertydefinition`)).status, 200);
  });

  test('createIfNotExists defaults to true: writing an existing aspect again is 412', async () => {
    const res = await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROP)}/propertyDefinition`, { method: 'POST', body: JSON.stringify({ value: definition }) });
    assert.equal(res.status, 412);
    assert.deepEqual(await res.json(), { error: 'Precondition Failed', message: 'Cannot perform CREATE since the aspect already exists.', reason: 'AspectExists' });
  });

  test('v2 creates or updates by default; an explicit createIfNotExists=true refuses an existing aspect with 412', async () => {
    const urn = 'urn:li:tag:v2CreateOrUpdate';
    const path = `/openapi/v2/entity/tag/${enc(urn)}/status`;
    await text(await s.request(path, { method: 'POST', body: '{"removed":false}' }), 200);
    await text(await s.request(path, { method: 'POST', body: '{"removed":true}' }), 200);
    const res = await s.request(`${path}?createIfNotExists=true`, { method: 'POST', body: '{"removed":false}' });
    assert.equal(res.status, 412);
    assert.deepEqual(await res.json(), { error: 'Precondition Failed', message: 'Cannot perform CREATE since the aspect already exists.', reason: 'AspectExists' });
    assert.deepEqual(JSON.parse(await text(await s.request(path), 200)), { value: { removed: true } });
  });

  test('createIfEntityNotExists=true on an existing entity is 412', async () => {
    const res = await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/subTypes?createIfEntityNotExists=true`, { method: 'POST', body: '{"value":{"typeNames":["x"]}}' });
    assert.equal(res.status, 412);
    const body = (await res.json()) as { message: string; reason?: string };
    assert.match(body.message, /Cannot perform CREATE_ENTITY if not exists since the entity key already exists\./);
    assert.equal(body.reason, 'EntityExists');
  });

  test('a time series aspect returns its latest entry', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,profiled,PROD)';
    for (const [t, rows] of [[1000, 10], [3000, 30], [2000, 20]]) {
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t, rowCount: rows } }) }), 200);
    }
    const latest = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile`), 200));
    assert.deepEqual(latest.datasetProfile.value, { timestampMillis: 3000, rowCount: 30 });
  });
});

describe('conditional-write headers (If-Version-Match, If-None-Match)', () => {
  const statusPath = (urn: string, query = 'createIfNotExists=false') => `/openapi/v3/entity/tag/${enc(urn)}/status?${query}`;
  const writeStatus = (urn: string, removed: boolean, headers?: Record<string, string>, query?: string) =>
    s.request(statusPath(urn, query), { method: 'POST', body: JSON.stringify({ value: { removed }, ...(headers ? { headers } : {}) }) });
  const readStatus = async (urn: string) => JSON.parse(await text(await s.request(`/openapi/v2/entity/tag/${enc(urn)}/status`), 200)).value;
  /** A tag whose status has versions 1, 2 and 3 (removed false, true, false). */
  async function tagWithThreeVersions(name: string): Promise<string> {
    const urn = `urn:li:tag:${name}`;
    for (const removed of [false, true, false]) await text(await writeStatus(urn, removed), 200);
    return urn;
  }
  const versionMismatch = (sent: string, actual: number) => (raw: string) =>
    assert.deepEqual(JSON.parse(raw), { error: 'Validation Error', message: `Expected version ${sent}, actual version ${actual}` });

  test('If-Version-Match that does not hold is 412 and writes nothing', async () => {
    const urn = await tagWithThreeVersions('ivmMismatch');
    await expectRejected(s, () => writeStatus(urn, true, { 'If-Version-Match': '999' }), 412, versionMismatch('999', 3));
    await expectRejected(s, () => writeStatus(urn, true, { 'If-Version-Match': '2' }), 412, versionMismatch('2', 3));
    await expectRejected(s, () => writeStatus(urn, true, { 'If-Version-Match': '-10000' }), 412, versionMismatch('-10000', 3));
    assert.deepEqual(await readStatus(urn), { removed: false });
  });

  test('If-Version-Match of the current version writes, and the version moves on', async () => {
    const urn = await tagWithThreeVersions('ivmMatch');
    assert.deepEqual(JSON.parse(await text(await writeStatus(urn, true, { 'If-Version-Match': '3' }), 200)), { urn, status: { value: { removed: true } } });
    assert.deepEqual(await readStatus(urn), { removed: true });
    await expectRejected(s, () => writeStatus(urn, false, { 'If-Version-Match': '3' }), 412, versionMismatch('3', 4));
    await text(await writeStatus(urn, false, { 'If-Version-Match': '4' }), 200);
    assert.deepEqual(await readStatus(urn), { removed: false });
  });

  test('If-Version-Match "-1" writes only an aspect that does not exist', async () => {
    const urn = 'urn:li:tag:ivmAbsent';
    await text(await writeStatus(urn, true, { 'If-Version-Match': '-1' }), 200);
    await expectRejected(s, () => writeStatus(urn, false, { 'If-Version-Match': '-1' }), 412, versionMismatch('-1', 1));
    assert.deepEqual(await readStatus(urn), { removed: true });
  });

  test('reads and write results with systemMetadata=true show the version number If-Version-Match takes', async () => {
    const urn = await tagWithThreeVersions('ivmRead');
    const version = (body: any, v: 'v2' | 'v3' = 'v3') => (v === 'v3' ? body.status : body).systemMetadata.version;
    // The latest, from each read that shows system metadata; a history read shows its own number.
    assert.equal(version(JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?systemMetadata=true`), 200))), '3');
    assert.equal(version(JSON.parse(await text(await s.request(`/openapi/v2/entity/tag/${enc(urn)}/status?systemMetadata=true`), 200)), 'v2'), '3');
    assert.equal(version(JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}?aspects=status&systemMetadata=true`), 200))), '3');
    const listed = JSON.parse(await text(await s.request(`/openapi/v3/entity/tag?aspects=status&systemMetadata=true&count=1000`), 200)).entities.find((e: any) => e.urn === urn);
    assert.equal(version(listed), '3');
    assert.equal(version(JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?version=2&systemMetadata=true`), 200))), '2');
    // Without systemMetadata=true, nothing of it.
    assert.deepEqual(JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status`), 200)), { urn, status: { value: { removed: false } } });
    // The number read is the one a conditional write takes; its result shows the next.
    const written = JSON.parse(await text(await writeStatus(urn, true, { 'If-Version-Match': '3' }, 'createIfNotExists=false&systemMetadata=true'), 200));
    assert.equal(version(written), '4');
    // A write that changes nothing keeps the number.
    assert.equal(version(JSON.parse(await text(await writeStatus(urn, true, undefined, 'createIfNotExists=false&systemMetadata=true'), 200))), '4');
    assert.equal(version(JSON.parse(await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?systemMetadata=true`), 200))), '4');
    // A write dropped by If-None-Match: * shows the aspect as stored, with its number.
    assert.equal(version(JSON.parse(await text(await writeStatus(urn, false, { 'If-None-Match': '*' }, 'createIfNotExists=false&systemMetadata=true'), 200))), '4');
  });

  test('If-Version-Match guards an aspect with rules (structuredProperties) the same way', async () => {
    const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties?createIfNotExists=false`;
    const [row] = await sql<{ n: number }>(s.databaseUrl, "SELECT max(version)::int + 1 AS n FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties'", [DATASET]);
    const n = row!.n;
    const value = { properties: [{ propertyUrn: PROP, values: [{ double: 365 }] }] };
    const post = (version: string) => s.request(path, { method: 'POST', body: JSON.stringify({ value, headers: { 'If-Version-Match': version } }) });
    await expectRejected(s, () => post(String(n + 1)), 412, versionMismatch(String(n + 1), n));
    assert.deepEqual(JSON.parse(await text(await post(String(n)), 200)), { urn: DATASET, structuredProperties: { value } });
  });

  test('concurrent writes carrying the same If-Version-Match: exactly one is written, the others are 412', async () => {
    // The check is made by the write itself, against the row it replaces: of writes that all read the
    // same version, only one may go through, with or without the aspect's rules (and its locks). Every
    // write changes the value: a write of the value stored changes nothing, keeps the version, and so
    // holds its If-Version-Match whenever it runs before the one that changes it.
    const urn = await tagWithThreeVersions('ivmRace');
    const tags = await Promise.all(Array.from({ length: 8 }, () => writeStatus(urn, true, { 'If-Version-Match': '3' })));
    assert.deepEqual(tags.map((r) => r.status).sort(), [200, 412, 412, 412, 412, 412, 412, 412]);
    const [tagVersions] = await sql<{ n: number }>(s.databaseUrl, "SELECT max(version)::int + 1 AS n FROM aspects WHERE urn = $1 AND aspect = 'status'", [urn]);
    assert.equal(tagVersions!.n, 4);

    const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties?createIfNotExists=false`;
    await text(await s.request(path, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: PROP, values: [{ double: 365 }] }] } }) }), 200);
    const [row] = await sql<{ n: number }>(s.databaseUrl, "SELECT max(version)::int + 1 AS n FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties'", [DATASET]);
    const n = row!.n;
    const sets = await Promise.all(
      [30, 60, 30, 60, 30, 60].map((d) =>
        s.request(path, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: PROP, values: [{ double: d }] }] }, headers: { 'If-Version-Match': String(n) } }) }),
      ),
    );
    const statuses = sets.map((r) => r.status);
    assert.equal(statuses.filter((x) => x === 200).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((x) => x === 412).length, 5, JSON.stringify(statuses));
    const [after] = await sql<{ n: number }>(s.databaseUrl, "SELECT max(version)::int + 1 AS n FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties'", [DATASET]);
    assert.equal(after!.n, n + 1);
  });

  test('a non-numeric If-Version-Match, another If-None-Match than "*", or an unknown header is a 400 saying what is expected', async () => {
    const urn = await tagWithThreeVersions('ivmBadInput');
    await expectValidationError(s, () => writeStatus(urn, true, { 'If-Version-Match': 'abc' }), 400, `headers.If-Version-Match: expected the aspect's version number as a string of digits`);
    await expectValidationError(s, () => s.request(statusPath(urn), { method: 'POST', body: '{"value":{"removed":true},"headers":{"If-Version-Match":3}}' }), 400, 'headers.If-Version-Match: expected');
    await expectValidationError(s, () => writeStatus(urn, true, { 'If-None-Match': 'abc' }), 400, 'headers.If-None-Match: expected "*"');
    await expectValidationError(s, () => writeStatus(urn, true, { 'If-Modified-Since': '2020-01-01T00:00:00Z' }), 400, 'unknown header; a write takes If-Version-Match, If-None-Match');
  });

  test('If-None-Match: * drops the write of an aspect that exists (200, nothing changed), and writes one that does not', async () => {
    const urn = await tagWithThreeVersions('inmExisting');
    for (const query of ['', 'createIfNotExists=false']) {
      await expectRejected(s, () => writeStatus(urn, true, { 'If-None-Match': '*' }, query), 200, (raw) => assert.deepEqual(JSON.parse(raw), { urn, status: { value: { removed: false } } }));
    }
    const fresh = 'urn:li:tag:inmFresh';
    assert.deepEqual(JSON.parse(await text(await writeStatus(fresh, true, { 'If-None-Match': '*' }, 'createIfNotExists=false'), 200)), { urn: fresh, status: { value: { removed: true } } });
    assert.deepEqual(await readStatus(fresh), { removed: true });
  });

  test('If-None-Match: * with createIfEntityNotExists=true drops a write to an entity that exists', async () => {
    const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/subTypes?createIfEntityNotExists=true`;
    await expectRejected(s, () => s.request(path, { method: 'POST', body: '{"value":{"typeNames":["x"]},"headers":{"If-None-Match":"*"}}' }), 200, (raw) => assert.deepEqual(JSON.parse(raw), { urn: DATASET }));
  });

  test('in a batch, an item whose If-Version-Match does not hold fails the whole batch with 412', async () => {
    const urn = await tagWithThreeVersions('ivmBatch');
    const other = 'urn:li:tag:ivmBatchOther';
    const batch = (version: string) =>
      s.request('/openapi/v3/entity/tag?async=false', {
        method: 'POST',
        body: JSON.stringify([
          { urn, status: { value: { removed: true }, headers: { 'If-Version-Match': version } } },
          { urn: other, status: { value: { removed: true } } },
        ]),
      });
    await expectRejected(s, () => batch('-10000'), 412, versionMismatch('-10000', 3));
    await expectMissing(s.request(`/openapi/v3/entity/tag/${enc(other)}`));
    await text(await batch('3'), 200);
    assert.deepEqual(await readStatus(urn), { removed: true });
    assert.deepEqual(await readStatus(other), { removed: true });
  });

  test('a batch item takes If-Version-Match only (a batch always creates or updates)', async () => {
    const body = JSON.stringify([{ urn: 'urn:li:tag:inmBatch', aspects: { status: { value: { removed: true }, headers: { 'If-None-Match': '*' } } } }]);
    await expectValidationError(s, () => s.request('/openapi/v2/entity/tag', { method: 'POST', body }), 400, 'unknown header; a write takes If-Version-Match');
  });
});
