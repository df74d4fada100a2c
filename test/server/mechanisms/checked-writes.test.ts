/**
 * Writes prepared without locks (structured-property values, definition updates) are checked by their
 * write statement: the row goes in only if what the rules relied on is still as read. These tests
 * change that state while a prepared write waits for its entity's lock (held here by another
 * connection), so the write statement finds it changed: the write is prepared again, and the rules
 * decide on the new state.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPool, type Pool } from '../../../server/src/db/pool.ts';
import { writeAspects, type AspectWrite } from '../../../server/src/entities/writeStatement.ts';
import { createDataset, createProperty, definitionOf, setValues, writeDefinition } from '../../support/structuredProperties.ts';
import { enc, sql, startTestServer, text, type TestServer } from '../../support/testServer.ts';

let s: TestServer;
let pool: Pool;
before(async () => {
  s = await startTestServer();
  pool = createPool(s.databaseUrl, 2);
});
after(async () => {
  await pool?.end();
  await s?.close();
});

/** Holds the write lock of `urn` from another connection until `release` is called. */
async function holdLock(urn: string): Promise<{ release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [urn]);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await c.query('COMMIT');
      await c.end();
    },
  };
}

/** Waits until `n` statements of the server wait for an advisory lock (fails after 30 s). */
async function lockWaiters(n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await sql<{ n: number }>(
      s.databaseUrl,
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
    );
    if (row!.n >= n) return;
    if (Date.now() > deadline) assert.fail(`${n} statement(s) never waited for a lock`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const write = (urn: string, over: Partial<AspectWrite> = {}): AspectWrite => ({
  urn,
  aspect: 'datasetProperties',
  keyAspect: 'datasetKey',
  key: { platform: 'urn:li:dataPlatform:hive', name: urn, origin: 'PROD' },
  value: { description: 'checked' },
  systemMetadata: { runId: 'checked-writes' },
  actor: 'urn:li:corpuser:test',
  mode: 'upsert',
  ...over,
});

test('a row whose aspect or guard changed since it was read is reported stale and writes nothing', async () => {
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,checked_store,PROD)';
  const guardUrn = 'urn:li:dataset:(urn:li:dataPlatform:hive,checked_guard,PROD)';
  const [created] = await writeAspects(pool, [write(urn), write(guardUrn)]);
  assert.match(created!, /^created:/);
  const [stored] = await sql<{ token: string }>(
    s.databaseUrl,
    "SELECT metadata::text || ' ' || system_metadata::text AS token FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' AND version = 0",
    [urn],
  );
  const [guarded0] = await sql<{ text: string }>(s.databaseUrl, "SELECT metadata::text AS text FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' AND version = 0", [guardUrn]);
  const token = stored!.token;
  const guard = { urn: guardUrn, aspect: 'datasetProperties', text: guarded0!.text };

  // As read: written.
  const [ok] = await writeAspects(pool, [write(urn, { value: { description: 'second' }, expected: token, guards: [guard] })]);
  assert.match(ok!, /^updated:/);
  // The aspect changed since (the write above): stale, nothing written.
  const [stale] = await writeAspects(pool, [write(urn, { value: { description: 'third' }, expected: token })]);
  assert.match(stale!, /^stale:datasetProperties of .* was written meanwhile$/);
  // The guarded row changed: stale.
  await writeAspects(pool, [write(guardUrn, { value: { description: 'changed' } })]);
  const [current] = await sql<{ token: string }>(
    s.databaseUrl,
    "SELECT metadata::text || ' ' || system_metadata::text AS token FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' AND version = 0",
    [urn],
  );
  const [guarded] = await writeAspects(pool, [write(urn, { value: { description: 'fourth' }, expected: current!.token, guards: [guard] })]);
  assert.match(guarded!, /^stale:datasetProperties of .* changed meanwhile$/);
  // Atomic: the statement fails as a whole.
  await assert.rejects(writeAspects(pool, [write(guardUrn, { value: { description: 'x' } }), write(urn, { value: { description: 'fifth' }, expected: token })], true), /written meanwhile/);
  const rows = await sql<{ description: string; urn: string }>(
    s.databaseUrl,
    "SELECT urn, metadata->>'description' AS description FROM aspects WHERE urn = ANY($1) AND aspect = 'datasetProperties' AND version = 0 ORDER BY urn",
    [[urn, guardUrn]],
  );
  assert.deepEqual(
    rows.map((r) => r.description),
    ['changed', 'second'],
  );
});

test('a value write prepared before its property was soft deleted is prepared again and refused', async () => {
  const p = await createProperty(s, 'test.checked.softDeleted');
  const other = await createProperty(s, 'test.checked.other');
  const ds = await createDataset(s, 'checked_soft_deleted');
  const blocker = await holdLock(ds);
  try {
    // Prepared now (the property is live); its statement waits for the entity's lock.
    const pending = setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'late' }] }]);
    await lockWaiters(1);
    // Meanwhile the property is soft deleted (by a request of two rows: written at once, not queued
    // behind the waiting write's statement).
    const res = await s.request(`/openapi/v3/entity/structuredProperty?async=false`, {
      method: 'POST',
      body: JSON.stringify([
        { urn: p, status: { value: { removed: true } } },
        { urn: other, status: { value: { removed: false } } },
      ]),
    });
    await text(res, 200);
    await blocker.release();
    const refused = await pending;
    assert.equal(refused.status, 400, await refused.clone().text());
    assert.match(await refused.text(), /Cannot apply a soft deleted Structured Property value/);
  } finally {
    await blocker.release();
  }
  assert.deepEqual(await sql(s.databaseUrl, "SELECT urn FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties'", [ds]), [], 'the refused write wrote nothing');
});

test('a definition update prepared before an entity type it names was deleted is prepared again and refused', async () => {
  const qn = 'test.checked.types';
  const p = await createProperty(s, qn);
  const chart = 'urn:li:entityType:svc.chart';
  const blocker = await holdLock(p);
  try {
    // Prepared now (the chart entity type exists); its statement waits for the property's lock.
    const pending = writeDefinition(s, p, definitionOf(qn, { entityTypes: ['urn:li:entityType:svc.dataset', chart], displayName: 'late' }));
    await lockWaiters(1);
    // No client may delete an entity type (they are built into svc): it goes from the database itself.
    await sql(s.databaseUrl, 'DELETE FROM aspects WHERE urn = $1', [chart]);
    await blocker.release();
    const refused = await pending;
    assert.equal(refused.status, 400, await refused.clone().text());
    assert.match(await refused.text(), new RegExp(`Provided entityType ${chart} is not an existing entityType entity`));
  } finally {
    await blocker.release();
  }
  const [row] = await sql<{ display: string | null }>(s.databaseUrl, "SELECT metadata->>'displayName' AS display FROM aspects WHERE urn = $1 AND aspect = 'propertyDefinition' AND version = 0", [p]);
  assert.equal(row!.display, null, 'the refused update wrote nothing');
});
