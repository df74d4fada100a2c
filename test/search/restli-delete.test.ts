/**
 * DataHub's `POST /entities?action=delete` deletes what it names and nothing else, on both time series
 * stores: `{urn, aspectName, startTimeMillis, endTimeMillis}` (what `datahub delete -a <aspect> --hard
 * --start-time … --end-time …` and the SDK's `hard_delete_timeseries_aspect` send) the entries of that
 * aspect in the range, ends included, and the entity stays (it once deleted the whole dataset);
 * `{urn, aspectName}` of a versioned aspect that aspect; `{urn}` the entity. A range with no time series
 * aspect to apply to, a key aspect, an unknown or prototype-named parameter are refused and change
 * nothing. svc's own data and entity types are not deletable or writable by a client, and
 * `urn:li:entityType:dataset` is not read as `urn:li:entityType:svc.dataset` (DataHub's smoke tests
 * delete it, and new definitions naming datasets were then refused until a restart).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectRejected } from '../support/expectRejected.ts';
import { createProperty, datasetUrn } from '../support/structuredProperties.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

for (const backend of searchBackends()) {
  describe(`POST /entities?action=delete on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
    });
    after(async () => {
      await s.close();
    });

    const action = (body: unknown, token?: string) => s.request('/entities?action=delete', { method: 'POST', body: JSON.stringify(body), ...(token ? { token } : {}) });
    /** Ships what waits in the outbox (the opensearch store), so that entries are in OpenSearch, not only staged. */
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();

    /** A dataset with a status, properties and `n` profiles an hour apart from T0. */
    async function dataset(name: string, n: number): Promise<string> {
      const urn = datasetUrn(name);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"kept"}}' }), 200);
      for (let i = 0; i < n; i++) {
        await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: T0 + i * HOUR, rowCount: i } }) }), 200);
      }
      await settle();
      return urn;
    }

    /** The rowCounts of the profiles of a dataset, oldest first. */
    async function profiles(urn: string): Promise<number[]> {
      const res = JSON.parse(await text(await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body: JSON.stringify({ urn, entity: 'dataset', aspect: 'datasetProfile', limit: 100 }) }), 200));
      return res.value.values.map((v: { aspect: { value: string } }) => JSON.parse(v.aspect.value).rowCount).reverse();
    }

    test('a time series aspect and a range: the entries in the range go, ends included, and the entity and its other aspects stay', async () => {
      for (const staged of [false, true]) {
        const urn = await dataset(`range.${staged ? 'staged' : 'shipped'}`, 5);
        // Entries written since the last shipping step are deleted from the outbox too.
        if (staged) await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: T0 + 2 * HOUR + 1, rowCount: 99 } }) }), 200);
        const res = await action({ urn, aspectName: 'datasetProfile', startTimeMillis: T0 + HOUR, endTimeMillis: T0 + 3 * HOUR });
        assert.deepEqual(JSON.parse(await text(res, 200)), { value: { urn, timeseriesRows: staged ? 4 : 3 } });
        assert.deepEqual(await profiles(urn), [0, 4]);
        await settle();
        assert.deepEqual(await profiles(urn), [0, 4], 'after the deletion reached the store');
        const entity = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`), 200));
        assert.deepEqual(entity.status.value, { removed: false });
        assert.equal(entity.datasetProperties.value.description, 'kept');
      }
    });

    test('an entry written again since it was shipped is one entry: deleted and counted once', async () => {
      const urn = await dataset('range.again', 3);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: T0 + HOUR, rowCount: 10 } }) }), 200);
      assert.deepEqual(await profiles(urn), [0, 10, 2]);
      const res = await action({ urn, aspectName: 'datasetProfile', startTimeMillis: T0, endTimeMillis: T0 + HOUR });
      assert.deepEqual(JSON.parse(await text(res, 200)), { value: { urn, timeseriesRows: 2 } });
      assert.deepEqual(await profiles(urn), [2]);
      await settle();
      assert.deepEqual(await profiles(urn), [2], 'after the deletion reached the store');
    });

    test('a time series aspect with one end or none: the range is open on that side', async () => {
      const urn = await dataset('range.open', 4);
      assert.deepEqual(JSON.parse(await text(await action({ urn, aspectName: 'datasetProfile', startTimeMillis: T0 + 2 * HOUR }), 200)).value.timeseriesRows, 2);
      assert.deepEqual(await profiles(urn), [0, 1]);
      assert.deepEqual(JSON.parse(await text(await action({ urn, aspectName: 'datasetProfile', endTimeMillis: T0 }), 200)).value.timeseriesRows, 1);
      assert.deepEqual(await profiles(urn), [1]);
      assert.deepEqual(JSON.parse(await text(await action({ urn, aspectName: 'datasetProfile' }), 200)).value.timeseriesRows, 1);
      assert.deepEqual(await profiles(urn), []);
      assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status`)).status, 200);
    });

    test('a versioned aspect: that aspect goes, the entity stays', async () => {
      const urn = await dataset('versioned', 1);
      assert.deepEqual(JSON.parse(await text(await action({ urn, aspectName: 'datasetProperties' }), 200)), { value: { urn, rows: 1, timeseriesRows: 0 } });
      assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`)).status, 404);
      assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status`)).status, 200);
      assert.deepEqual(await profiles(urn), [0]);
    });

    test('refused, changing nothing: a range without a time series aspect, a range on a versioned aspect, the key aspect, an unknown aspect', async () => {
      const urn = await dataset('refused', 2);
      const cases: [unknown, RegExp][] = [
        [{ urn, startTimeMillis: T0, endTimeMillis: T0 + HOUR }, /name it with aspectName/],
        [{ urn, endTimeMillis: T0 }, /name it with aspectName/],
        [{ urn, aspectName: 'datasetProperties', startTimeMillis: T0 }, /datasetProperties is a versioned aspect of dataset/],
        [{ urn, aspectName: 'datasetKey' }, /datasetKey is the key aspect of dataset: to delete the entity, send \{"urn"\} alone/],
        [{ urn, aspectName: 'noSuchAspect' }, /noSuchAspect/],
        [{ urn, aspectName: 'datasetProfile', startTimeMillis: 'yesterday' }, /Parameter 'startTimeMillis' must be an integer of epoch milliseconds/],
        [{ aspectName: 'datasetProfile' }, /Parameter 'urn' is required/],
      ];
      for (const [body, message] of cases) {
        await expectRejected(s, () => action(body), 400, (raw) => assert.match(JSON.parse(raw).message, message, raw));
      }
      assert.deepEqual(await profiles(urn), [0, 1]);
    });

    test('an unknown parameter, or one named as a property of every object, is refused by name on both actions, changing nothing', async () => {
      const urn = await dataset('unknown.parameters', 1);
      for (const name of ['aspect', 'start', 'entityUrn', ...PROTOTYPE_NAMES]) {
        for (const [path, body] of [
          ['/entities?action=delete', { urn, aspectName: 'datasetProfile' }],
          ['/entities?action=deleteReferences', { urn, dryRun: false }],
        ] as const) {
          // Written as text: an object literal's __proto__ would set its prototype, not a key.
          const text = `${JSON.stringify(body).slice(0, -1)},${JSON.stringify(name)}:{"dryRun":false}}`;
          await expectRejected(s, () => s.request(path, { method: 'POST', body: text }), 400, (raw) => {
            // __proto__ is refused at the door, in any body (see inputRules.ts); the others by the action.
            const expected = name === '__proto__' ? /a field name is __proto__/ : new RegExp(`Parameter '${name}' is not a parameter of`);
            assert.match(JSON.parse(raw).message, expected, raw);
          });
        }
      }
      assert.deepEqual(await profiles(urn), [0]);
    });

    test('a hard delete of the whole entity answers the rows it removed', async () => {
      const urn = await dataset('whole', 1);
      const res = JSON.parse(await text(await action({ urn }), 200));
      assert.equal(res.value.urn, urn);
      assert.ok(res.value.rows >= 3, JSON.stringify(res));
      assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`)).status, 404);
      await settle();
      assert.deepEqual(await profiles(urn), []);
    });

    test("svc's data and entity types are not a client's to delete or write, and urn:li:entityType:dataset is another entity", async () => {
      const builtIn = ['urn:li:entityType:svc.dataset', 'urn:li:entityType:datahub.dataset', 'urn:li:dataType:svc.string', 'urn:li:dataType:datahub.string'];
      for (const urn of builtIn) {
        await expectRejected(s, () => action({ urn }), 403, (raw) => assert.match(JSON.parse(raw).message, /is built into svc/, raw));
      }
      await expectRejected(s, () => s.request(`/openapi/v3/entity/entityType/${enc('urn:li:entityType:svc.dataset')}`, { method: 'DELETE' }), 403, (raw) => assert.match(raw, /is built into svc/));
      await expectRejected(
        s,
        () => s.request(`/openapi/v3/entity/dataType/${enc('urn:li:dataType:svc.string')}/dataTypeInfo?createIfNotExists=false`, { method: 'POST', body: '{"value":{"qualifiedName":"svc.string","displayName":"hijacked"}}' }),
        403,
        (raw) => assert.match(raw, /is built into svc/),
      );
      // DataHub's smoke tests end a module so: a different entity, which does not exist.
      assert.deepEqual(JSON.parse(await text(await action({ urn: 'urn:li:entityType:dataset' }), 200)), { value: { urn: 'urn:li:entityType:dataset', rows: 0, timeseriesRows: 0 } });
      // Datasets are still a type definitions may name.
      await createProperty(s, 'delete.after.types', { entityTypes: ['urn:li:entityType:datahub.dataset'] });
    });
  });
}
