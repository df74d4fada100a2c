/**
 * The seed's example flows end to end, on both OpenAPI families, with the exact response shapes of
 * P1–P4 (seed-interface.md, Endpoints): create `io.acryl.privacy.retentionTime` (number, MULTIPLE,
 * dataset and dataFlow, allowed 30/60/365), read it, set 60.0 on a dataset, create the string property
 * with allowed foo2/bar2, patch-add bar2 and patch-remove it. Doubles come back with a decimal point
 * in the raw text (`60.0`). The v2 responses to P1 and P3 are "not shown" by the seed: svc answers with
 * the v2 entity shape `{"urn", "aspects": {...}}`, as its P4 response.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { datasetUrn, propertyUrn, retentionTimeDefinition, type ApiVersion } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

/** The entity shape of a family: v3 puts the aspect beside `urn`, v2 under `aspects`. */
function entityShape(v: ApiVersion, urn: string, aspect: string, value: unknown): unknown {
  return v === 'v3' ? { urn, [aspect]: { value } } : { urn, aspects: { [aspect]: { value } } };
}

/** The raw JSON text of `value` as svc writes it: a `double` always with a decimal point. */
const withDecimals = (value: unknown) => JSON.stringify(value).replace(/"double":(-?\d+)\}/g, '"double":$1.0}');

for (const v of ['v3', 'v2'] as const) {
  describe(`seed flows on ${v}`, () => {
    // v3 uses the seed's names; v2 the same flow under names of its own (one database per file).
    const suffix = v === 'v3' ? '' : 'V2';
    const qualifiedName = `io.acryl.privacy.retentionTime${suffix}`;
    const PROP = propertyUrn(qualifiedName);
    const qualifiedName02 = `io.acryl.privacy.retentionTime02${suffix}`;
    const PROP02 = propertyUrn(qualifiedName02);
    const DATASET = datasetUrn(`SampleHiveDataset${suffix}`);
    const FLOW = `urn:li:dataFlow:(airflow,retention_flow${suffix},prod)`;
    const base = `/openapi/${v}/entity`;
    const wrap = (value: unknown) => JSON.stringify(v === 'v3' ? { value } : value);

    const definition = retentionTimeDefinition(qualifiedName);
    const definition02 = {
      qualifiedName: qualifiedName02,
      valueType: 'urn:li:dataType:svc.string',
      description: 'Retention Time is used to figure out how long to retain records in a dataset',
      displayName: 'Retention Time 02',
      cardinality: 'MULTIPLE',
      entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
      allowedValues: [
        { value: { string: 'foo2' }, description: 'test foo2 value' },
        { value: { string: 'bar2' }, description: 'test bar2 value' },
      ],
    };
    const retention60 = { propertyUrn: PROP, values: [{ double: 60 }] };
    const patchHeaders = { 'content-type': 'application/json-patch+json', accept: 'application/json' };

    test('P1 creates io.acryl.privacy.retentionTime and answers with the definition as sent', async () => {
      const raw = await text(await s.request(`${base}/structuredProperty/${enc(PROP)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: wrap(definition) }), 200);
      assert.deepEqual(JSON.parse(raw), entityShape(v, PROP, 'propertyDefinition', definition));
      assert.ok(raw.includes('{"double":30.0}') && raw.includes('{"double":60.0}') && raw.includes('{"double":365.0}'), raw);
    });

    test('P2 reads the definition back, numbers as decimals', async () => {
      const raw = await text(await s.request(`${base}/structuredProperty/${enc(PROP)}/propertyDefinition`, { headers: { accept: 'application/json' } }), 200);
      if (v === 'v2') assert.equal(raw, withDecimals({ value: definition }));
      else assert.equal(raw, withDecimals({ urn: PROP, propertyDefinition: { value: definition } }));
    });

    test('P3 sets 60.0 on an existing dataset and answers the properties', async () => {
      await text(await s.request(`${base}/dataset/${enc(DATASET)}/status?createIfNotExists=false`, { method: 'POST', body: wrap({ removed: false }) }), 200);
      const body = v === 'v3' ? `{"value":{"properties":[{"propertyUrn":"${PROP}","values":[{"double":60.0}]}]}}` : `{"properties":[{"propertyUrn":"${PROP}","values":[{"double":60.0}]}]}`;
      const raw = await text(await s.request(`${base}/dataset/${enc(DATASET)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body }), 200);
      assert.deepEqual(JSON.parse(raw), entityShape(v, DATASET, 'structuredProperties', { properties: [retention60] }));
      assert.ok(raw.includes('"values":[{"double":60.0}]'), raw);
    });

    test('the dataset reads back with 60.0', async () => {
      const raw = await text(await s.request(`${base}/dataset/${enc(DATASET)}/structuredProperties`), 200);
      const expected = v === 'v2' ? { value: { properties: [retention60] } } : { urn: DATASET, structuredProperties: { value: { properties: [retention60] } } };
      assert.equal(raw, withDecimals(expected));
      assert.ok(raw.includes('60.0'), raw);
    });

    test('P3 sets several allowed values on a dataFlow', async () => {
      await text(await s.request(`${base}/dataFlow/${enc(FLOW)}/status?createIfNotExists=false`, { method: 'POST', body: wrap({ removed: false }) }), 200);
      const value = { properties: [{ propertyUrn: PROP, values: [{ double: 30 }, { double: 365 }] }] };
      const raw = await text(await s.request(`${base}/dataFlow/${enc(FLOW)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: wrap(value) }), 200);
      assert.deepEqual(JSON.parse(raw), entityShape(v, FLOW, 'structuredProperties', value));
      assert.ok(raw.includes('[{"double":30.0},{"double":365.0}]'), raw);
    });

    test('P1 creates the string property with allowed values foo2 and bar2', async () => {
      const raw = await text(await s.request(`${base}/structuredProperty/${enc(PROP02)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: wrap(definition02) }), 200);
      assert.deepEqual(JSON.parse(raw), entityShape(v, PROP02, 'propertyDefinition', definition02));
    });

    test('P4 patch add of bar2 keeps 60.0 and answers both properties', async () => {
      const res = await s.request(`${base}/dataset/${enc(DATASET)}/structuredProperties`, {
        method: 'PATCH',
        headers: patchHeaders,
        body: JSON.stringify({
          patch: [{ op: 'add', path: `/properties/${PROP02}`, value: { propertyUrn: PROP02, values: [{ string: 'bar2' }] } }],
          arrayPrimaryKeys: { properties: ['propertyUrn'] },
        }),
      });
      const raw = await text(res, 200);
      const properties = [retention60, { propertyUrn: PROP02, values: [{ string: 'bar2' }] }];
      assert.deepEqual(JSON.parse(raw), entityShape(v, DATASET, 'structuredProperties', { properties }));
      assert.ok(raw.includes('{"double":60.0}'), raw);
    });

    test('P4 patch remove of the string property leaves 60.0 alone', async () => {
      const res = await s.request(`${base}/dataset/${enc(DATASET)}/structuredProperties`, {
        method: 'PATCH',
        headers: patchHeaders,
        body: JSON.stringify({ patch: [{ op: 'remove', path: `/properties/${PROP02}` }], arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
      });
      const raw = await text(res, 200);
      assert.deepEqual(JSON.parse(raw), entityShape(v, DATASET, 'structuredProperties', { properties: [retention60] }));
      assert.ok(raw.includes('"values":[{"double":60.0}]'), raw);
      const read = JSON.parse(await text(await s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`), 200));
      assert.deepEqual(read, { value: { properties: [retention60] } });
    });

    test('P9 lists the dataset with its key and its properties', async () => {
      const res = await s.request(`${base}/dataset?systemMetadata=false&aspects=datasetKey&aspects=structuredProperties&count=10&sort=urn&sortOrder=ASCENDING`, {
        headers: { accept: 'application/json' },
      });
      const raw = await text(res, 200);
      const body = JSON.parse(raw);
      const items = v === 'v3' ? body.entities : body.results;
      const entity = items.find((e: { urn: string }) => e.urn === DATASET);
      const key = { platform: 'urn:li:dataPlatform:hive', name: `SampleHiveDataset${suffix}`, origin: 'PROD' };
      const expected = v === 'v3'
        ? { urn: DATASET, datasetKey: { value: key }, structuredProperties: { value: { properties: [retention60] } } }
        : { urn: DATASET, aspects: { datasetKey: { value: key }, structuredProperties: { value: { properties: [retention60] } } } };
      assert.deepEqual(entity, expected);
      assert.ok(raw.includes('{"double":60.0}'), raw);
    });
  });
}

describe('the seed\'s v2 calls as written, without createIfNotExists', () => {
  const PROP = propertyUrn('io.acryl.privacy.seedV2Plain');
  const DATASET = datasetUrn('SeedV2Plain');
  const status = (removed: boolean) =>
    s.request(`/openapi/v2/entity/structuredProperty/${enc(PROP)}/status?systemMetadata=false`, { method: 'POST', body: JSON.stringify({ removed }) });
  const set = (values: { double: number }[]) =>
    s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`, { method: 'POST', body: JSON.stringify({ properties: [{ propertyUrn: PROP, values }] }) });

  before(async () => {
    await text(await s.request(`/openapi/v2/entity/structuredProperty/${enc(PROP)}/propertyDefinition`, { method: 'POST', body: JSON.stringify(retentionTimeDefinition('io.acryl.privacy.seedV2Plain')) }), 200);
    await text(await s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/status`, { method: 'POST', body: '{"removed":false}' }), 200);
  });

  test('P7 soft delete then restore: both answer 200 and the property is usable again', async () => {
    assert.deepEqual(JSON.parse(await text(await status(true), 200)), { urn: PROP, aspects: { status: { value: { removed: true } } } });
    assert.deepEqual(JSON.parse(await text(await status(false), 200)), { urn: PROP, aspects: { status: { value: { removed: false } } } });
    assert.deepEqual(JSON.parse(await text(await s.request(`/openapi/v2/entity/structuredProperty/${enc(PROP)}/status`), 200)), { value: { removed: false } });
    await text(await set([{ double: 30 }]), 200);
  });

  test('P3 set twice: the second set replaces the first', async () => {
    await text(await set([{ double: 60 }]), 200);
    const raw = await text(await set([{ double: 365 }]), 200);
    assert.deepEqual(JSON.parse(raw), { urn: DATASET, aspects: { structuredProperties: { value: { properties: [{ propertyUrn: PROP, values: [{ double: 365 }] }] } } } });
    assert.deepEqual(JSON.parse(await text(await s.request(`/openapi/v2/entity/dataset/${enc(DATASET)}/structuredProperties`), 200)), {
      value: { properties: [{ propertyUrn: PROP, values: [{ double: 365 }] }] },
    });
  });
});
