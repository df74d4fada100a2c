/** Concurrent writes to one entity lose nothing. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { enc, startTestServer, text, type TestServer, expectMissing } from '../support/testServer.ts';
import { TRUNCATIONS_PATH, type TruncationAnswer } from '../../server/src/contract/truncation.ts';
import { svcTaskNumber } from '../../server/src/contract/tasks.ts';
import { pollUntil } from '../support/poll.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer({ SVC_DB_POOL_SIZE: '20' });
});
after(async () => {
  await s.close();
});

test('200 concurrent PATCH add of distinct properties on one entity leave all 200 present, and the hidden value of a soft-deleted property', async () => {
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,contended,PROD)';
  const path = `/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties`;
  const definitions = Array.from({ length: 200 }, (_, i) => ({
    urn: `urn:li:structuredProperty:contended.p${i}`,
    propertyDefinition: { value: { qualifiedName: `contended.p${i}`, valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] } },
  }));
  definitions.push({ urn: 'urn:li:structuredProperty:contended.hidden', propertyDefinition: { value: { qualifiedName: 'contended.hidden', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'] } } });
  assert.equal((await s.request('/openapi/v3/entity/structuredProperty?async=false', { method: 'POST', body: JSON.stringify(definitions) })).status, 200);
  assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' })).status, 200);
  // A value of a property soft-deleted afterwards: hidden from every patch below, which keep it.
  const hidden = 'urn:li:structuredProperty:contended.hidden';
  assert.equal((await s.request(`${path}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: hidden, values: [{ double: -1 }] }] } }) })).status, 200);
  const softDelete = (removed: boolean) => s.request(`/openapi/v3/entity/structuredProperty/${enc(hidden)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) });
  assert.equal((await softDelete(true)).status, 200);
  const lockedBefore = await metric('svc_write_locked_total');
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => {
      const prop = `urn:li:structuredProperty:contended.p${i}`;
      return s.request(path, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json-patch+json' },
        body: JSON.stringify({ patch: [{ op: 'add', path: `/properties/${prop}`, value: { propertyUrn: prop, values: [{ double: i }] } }], arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
      });
    }),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  // Conflicting again and again, some of them went under locks (where a patch reads what it applies to
  // once, under the entity's lock). Under the locked strategy every write takes locks from the start,
  // so none goes there from a checked attempt.
  if (process.env.SVC_WRITE_STRATEGY !== 'locked') assert.ok((await metric('svc_write_locked_total')) > lockedBefore, 'no patch was written under locks');
  assert.equal((await softDelete(false)).status, 200);
  const body = (await (await s.request(path)).json()) as { structuredProperties: { value: { properties: { propertyUrn: string; values: { double: number }[] }[] } } };
  const props = body.structuredProperties.value.properties;
  assert.equal(props.length, 201);
  assert.deepEqual(props.find((x) => x.propertyUrn === hidden)?.values, [{ double: -1 }]);
  for (let i = 0; i < 200; i++) {
    const p = props.find((x) => x.propertyUrn === `urn:li:structuredProperty:contended.p${i}`);
    assert.deepEqual(p?.values, [{ double: i }]);
  }
  // The set and every patch made a version: 200 older versions kept besides the latest.
  const v200 = await s.request(`${path}?version=200`);
  assert.equal(v200.status, 200);
  await expectMissing(s.request(`${path}?version=201`));
});

test('concurrent first writes of one new entity create it once', async () => {
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,raced,PROD)';
  const results = await Promise.all(
    ['status', 'subTypes', 'datasetProperties'].flatMap((aspect) =>
      Array.from({ length: 10 }, (_, i) =>
        s.request(`/openapi/v3/entity/dataset/${enc(urn)}/${aspect}?createIfNotExists=false`, {
          method: 'POST',
          body: JSON.stringify({ value: aspect === 'status' ? { removed: i % 2 === 0 } : aspect === 'subTypes' ? { typeNames: [`t${i}`] } : { description: `d${i}` } }),
        }),
      ),
    ),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  const entity = (await (await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`)).json()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(entity).sort(), ['datasetKey', 'datasetProperties', 'status', 'subTypes', 'urn']);
});

test('concurrent batches naming the same entities in opposite orders all succeed (no deadlock)', async () => {
  const a = 'urn:li:dataset:(urn:li:dataPlatform:hive,order_a,PROD)';
  const b = 'urn:li:dataset:(urn:li:dataPlatform:hive,order_b,PROD)';
  const batch = (urns: string[], i: number) =>
    s.request('/openapi/v3/entity/dataset?async=false', {
      method: 'POST',
      body: JSON.stringify(urns.map((urn) => ({ urn, status: { value: { removed: i % 2 === 0 } }, subTypes: { value: { typeNames: [`t${i}`] } } }))),
    });
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => batch(i % 2 ? [a, b] : [b, a], i)));
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  await assertNoDeadlockRetried();
});

/** A counter of `/metrics`. */
async function metric(name: string): Promise<number> {
  const metrics = await (await s.request('/metrics', { token: null })).text();
  return Number(metrics.match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? NaN);
}

/**
 * Asserts that no transaction was run again after a deadlock and no group-commit batch fell back to
 * single writes: a deadlock retried out of sight would make a test of lock order pass by luck.
 */
async function assertNoDeadlockRetried(): Promise<void> {
  assert.equal(await metric('svc_db_deadlock_retries_total'), 0, 'a transaction deadlocked and was run again');
  assert.equal(await metric('svc_db_grouped_write_fallbacks_total'), 0, 'a group-commit batch failed as a whole');
}

/** A batch item defining property `urn` (a dataset string property; `i` varies the description). */
const definition = (urn: string, i: number) => ({
  urn,
  propertyDefinition: { value: { qualifiedName: urn.slice('urn:li:structuredProperty:'.length), valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'], description: `d${i}` } },
});

test('value writes and batches of definitions touching the same properties in any order do not deadlock', async () => {
  const p1 = 'urn:li:structuredProperty:order.p1';
  const p2 = 'urn:li:structuredProperty:order.p2';
  assert.equal((await s.request('/openapi/v3/entity/structuredProperty?async=false', { method: 'POST', body: JSON.stringify([definition(p1, 0), definition(p2, 0)]) })).status, 200);
  const ds = 'urn:li:dataset:(urn:li:dataPlatform:hive,order_values,PROD)';
  assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' })).status, 200);
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? s.request('/openapi/v3/entity/structuredProperty?async=false', { method: 'POST', body: JSON.stringify(i % 4 === 1 ? [definition(p2, i), definition(p1, i)] : [definition(p1, i), definition(p2, i)]) })
        : s.request(`/openapi/v3/entity/dataset/${enc(ds)}/structuredProperties?createIfNotExists=false`, {
            method: 'POST',
            body: JSON.stringify({ value: { properties: (i % 4 === 0 ? [p2, p1] : [p1, p2]).map((propertyUrn) => ({ propertyUrn, values: [{ string: `v${i}` }] })) } }),
          }),
    ),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  await assertNoDeadlockRetried();
});

test('batches of value writes over several entities and batches of definitions do not deadlock', async () => {
  const p = 'urn:li:structuredProperty:order.batch.p';
  const q = 'urn:li:structuredProperty:order.batch.q';
  assert.equal((await s.request('/openapi/v3/entity/structuredProperty?async=false', { method: 'POST', body: JSON.stringify([definition(p, 0), definition(q, 0)]) })).status, 200);
  const a = 'urn:li:dataset:(urn:li:dataPlatform:hive,order_batch_a,PROD)';
  const b = 'urn:li:dataset:(urn:li:dataPlatform:hive,order_batch_b,PROD)';
  for (const ds of [a, b]) await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' });
  // Entity a carries q and entity b carries p: entity order and property order disagree.
  const values = (i: number) => [
    { urn: a, structuredProperties: { value: { properties: [{ propertyUrn: q, values: [{ string: `v${i}` }] }] } } },
    { urn: b, structuredProperties: { value: { properties: [{ propertyUrn: p, values: [{ string: `v${i}` }] }] } } },
  ];
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? s.request('/openapi/v3/entity/structuredProperty?async=false', { method: 'POST', body: JSON.stringify([definition(p, i), definition(q, i)]) })
        : s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify(values(i)) }),
    ),
  );
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  await assertNoDeadlockRetried();
});

test('an entity hard delete that comes while a truncation drops a month waits for it instead of deadlocking', async () => {
  // The order that deadlocked, made to happen: the truncation has locked January's month and counted it
  // (a trigger of this test pauses it as it records the count); the hard delete of an entity with entries
  // in every month starts then. The truncation locked the month and then wanted the index's table for
  // the drop; the hard delete held the table and waited for the month: a deadlock, run again out of
  // sight (and, under load, until it reached DataHub's gc as a 409).
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,series.deleted,PROD)';
  for (const t of [Date.UTC(2024, 0, 5), Date.UTC(2024, 6, 5)]) {
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t } }) }), 200);
  }
  const db = new pg.Client(s.databaseUrl);
  await db.connect();
  try {
    await db.query(`CREATE FUNCTION test_pause_truncation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$;
      CREATE TRIGGER test_pause_truncation BEFORE UPDATE ON tasks FOR EACH ROW
        WHEN (NEW.kind = 'timeseries-truncate' AND OLD.total IS NULL AND NEW.total IS NOT NULL) EXECUTE FUNCTION test_pause_truncation()`);
    const res = await s.request(TRUNCATIONS_PATH, { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: Date.UTC(2024, 2, 1) - 1, dryRun: false }) });
    assert.equal(res.status, 202);
    const answer = (await res.json()) as TruncationAnswer;
    const task = svcTaskNumber(answer.dryRun ? '' : answer.task);
    await pollUntil('the truncation paused with January locked', async () => (await db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).rowCount! > 0, (w) => w);
    const deleted = await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    const done = await pollUntil(`task ${task}`, async () => (await (await s.request(`/api/tasks/${task}`)).json()) as { state: string; done: number }, (t) => t.state === 'SUCCEEDED');
    await assertNoDeadlockRetried();
    // The truncation went first: it counted the entity's January entry before the delete took the rest.
    assert.equal(done.done, 1);
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(urn)}`));
  } finally {
    await db.query('DROP TRIGGER IF EXISTS test_pause_truncation ON tasks; DROP FUNCTION IF EXISTS test_pause_truncation()').catch(() => undefined);
    await db.end();
  }
});

/**
 * A read that holds a time series index's table and not yet its months (as every read of the entries
 * does for a moment: Postgres locks a table before its partitions) while a truncation drops or rebuilds
 * a month, which needs the table in ACCESS EXCLUSIVE mode. A truncation that had locked the month it
 * rebuilds in that mode before the table waited for the read, and the read for the month: a deadlock,
 * which reached DataHub's gc as a 409 on its read of an entity. The read is made to stop between the
 * two locks here (its table locked in a transaction of this test), and then reads the months.
 */
for (const { shape, times, endTimeMillis, gone } of [
  // January wholly before the boundary: dropped.
  { shape: 'drops a month', times: [Date.UTC(2024, 0, 5), Date.UTC(2024, 6, 5)], endTimeMillis: Date.UTC(2024, 2, 1) - 1, gone: 1 },
  // Three of January's four entries before the boundary: January is rebuilt with the fourth.
  { shape: 'rebuilds a month', times: [1, 2, 3, 20].map((d) => Date.UTC(2024, 0, d)), endTimeMillis: Date.UTC(2024, 0, 10), gone: 3 },
]) {
  test(`a read of a time series index that holds its table while a truncation ${shape} goes on instead of deadlocking`, async () => {
    const aspect = shape === 'drops a month' ? 'datasetUsageStatistics' : 'operation';
    const urn = `urn:li:dataset:(urn:li:dataPlatform:hive,series.read.${aspect},PROD)`;
    for (const t of times) {
      const value = aspect === 'operation' ? { timestampMillis: t, operationType: 'INSERT', lastUpdatedTimestamp: t } : { timestampMillis: t };
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
    }
    const reader = new pg.Client(s.databaseUrl);
    const watcher = new pg.Client(s.databaseUrl);
    await reader.connect();
    await watcher.connect();
    try {
      const table = (await reader.query<{ t: string }>('SELECT DISTINCT svc_timeseries_parent(index_name) AS t FROM timeseries_entries WHERE urn = $1', [urn])).rows[0]!.t;
      await reader.query('BEGIN');
      await reader.query(`LOCK TABLE ONLY "${table}" IN ACCESS SHARE MODE`);
      const res = await s.request(TRUNCATIONS_PATH, { method: 'POST', body: JSON.stringify({ entityType: 'dataset', aspect, endTimeMillis, dryRun: false }) });
      assert.equal(res.status, 202);
      const answer = (await res.json()) as TruncationAnswer;
      const task = svcTaskNumber(answer.dryRun ? '' : answer.task);
      // The truncation has counted and now waits for the read to let go of the table.
      await pollUntil(
        'the truncation waiting for the read',
        async () => (await watcher.query("SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = $1 AND NOT l.granted AND l.mode = 'AccessExclusiveLock'", [table])).rowCount!,
        (n) => n > 0,
      );
      const read = await reader.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
      assert.equal(Number(read.rows[0]!.n), times.length, 'the read sees every entry: the truncation has not dropped anything yet');
      await reader.query('COMMIT');
      const done = await pollUntil(`task ${task}`, async () => (await (await s.request(`/api/tasks/${task}`)).json()) as { state: string; done: number }, (t) => t.state === 'SUCCEEDED');
      assert.equal(done.done, gone);
      assert.equal(Number((await reader.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`)).rows[0]!.n), times.length - gone);
      await assertNoDeadlockRetried();
    } finally {
      await reader.query('ROLLBACK').catch(() => undefined);
      await reader.end();
      await watcher.end();
    }
  });
}
