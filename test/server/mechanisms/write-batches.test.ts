/**
 * Group commit of single-aspect writes (server/src/entities/writeBatcher.ts): writes queued behind a
 * statement in flight share one statement, yet each succeeds or fails on its own, in arrival order per
 * entity.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { SvcError } from '../../../server/src/shared/errors.ts';
import { WriteBatcher } from '../../../server/src/entities/writeBatcher.ts';
import { batchArguments, parseWritten, writeAspect, writeAspects, type AspectWrite, type Written } from '../../../server/src/entities/writeStatement.ts';
import { enc, sql, startTestServer, type TestServer } from '../../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer({ SVC_DB_POOL_SIZE: '20' });
});
after(async () => {
  await s.close();
});

const urnOf = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
function write(name: string, description: string, extra: Partial<AspectWrite> = {}): AspectWrite {
  return {
    urn: urnOf(name),
    aspect: 'datasetProperties',
    keyAspect: 'datasetKey',
    key: { platform: 'urn:li:dataPlatform:hive', name, origin: 'PROD' },
    value: { description },
    systemMetadata: { runId: 'batch-test' },
    actor: 'urn:li:corpuser:batch-test',
    mode: 'upsert',
    ...extra,
  };
}

/** Latest stored descriptions by URN, from the database itself. */
async function stored(names: string[]): Promise<Map<string, string>> {
  const rows = await sql<{ urn: string; d: string }>(
    s.databaseUrl,
    `SELECT urn, metadata->>'description' AS d FROM aspects WHERE urn = ANY($1) AND aspect = 'datasetProperties' AND version = 0`,
    [names.map(urnOf)],
  );
  return new Map(rows.map((r) => [r.urn, r.d]));
}

test('writes queued behind a statement in flight share statements, and every one of them is stored', async () => {
  const batcher = new WriteBatcher(s.svc.catalog.pool);
  const names = Array.from({ length: 30 }, (_, i) => `grouped_${i}`);
  // Issued together: the first goes out at once, the rest queue and go out as batches.
  const outcomes = await Promise.all(names.map((n) => batcher.write(write(n, `d-${n}`))));
  assert.deepEqual(outcomes.map((o) => o.outcome), names.map(() => 'created'));
  assert.deepEqual(outcomes.map((o) => o.version), names.map(() => 1));
  assert.equal(batcher.stats.writes, 30);
  assert.ok(batcher.stats.statements < 30, `30 writes took ${batcher.stats.statements} statements`);
  const rows = await stored(names);
  for (const n of names) assert.equal(rows.get(urnOf(n)), `d-${n}`);
  // The key aspect came with each new entity.
  const keys = await sql<{ n: number }>(s.databaseUrl, `SELECT count(*)::int AS n FROM aspects WHERE urn = ANY($1) AND aspect = 'datasetKey'`, [names.map(urnOf)]);
  assert.equal(keys[0]!.n, 30);
});

test('a second statement goes out beside the one in flight only once 8 writes wait', async () => {
  // Issued in one go: the first write goes alone; the next 8 wait and then go out beside it; the
  // last 2 wait for a statement to return.
  const many = new WriteBatcher(s.svc.catalog.pool);
  await Promise.all(Array.from({ length: 11 }, (_, i) => many.write(write(`second_${i}`, 'x'))));
  assert.deepEqual(many.stats, { writes: 11, statements: 3, fallbacks: 0 });
  // Fewer than 8 waiting: they wait for the first statement and go out together after it.
  const few = new WriteBatcher(s.svc.catalog.pool);
  await Promise.all(Array.from({ length: 5 }, (_, i) => few.write(write(`few_${i}`, 'x'))));
  assert.deepEqual(few.stats, { writes: 5, statements: 2, fallbacks: 0 });
});

test('a failed CREATE precondition in a batch fails that write alone', async () => {
  const batcher = new WriteBatcher(s.svc.catalog.pool);
  await batcher.write(write('taken', 'first'));
  const before = batcher.stats.statements;
  const results = await Promise.allSettled([
    batcher.write(write('slot_a', 'a')),
    batcher.write(write('slot_b', 'b')),
    // These queue behind the first write and share one statement.
    batcher.write(write('taken', 'second', { mode: 'create' })),
    batcher.write(write('fresh_1', 'f1', { mode: 'create' })),
    batcher.write(write('fresh_2', 'f2', { mode: 'create_entity' })),
  ]);
  assert.ok(batcher.stats.statements - before < 5, 'the queued writes were batched');
  assert.equal(batcher.stats.fallbacks, 0);
  const failed = results[2];
  assert.equal(failed.status, 'rejected');
  assert.ok(failed.reason instanceof SvcError);
  assert.equal(failed.reason.code, 'PRECONDITION');
  assert.equal(failed.reason.message, 'Cannot perform CREATE since the aspect already exists.');
  assert.deepEqual(results.filter((r) => r.status === 'fulfilled').map((r) => r.value.outcome), ['created', 'created', 'created', 'created']);
  const rows = await stored(['taken', 'fresh_1', 'fresh_2']);
  assert.equal(rows.get(urnOf('taken')), 'first', 'the failed write changed nothing');
  assert.equal(rows.get(urnOf('fresh_1')), 'f1');
  assert.equal(rows.get(urnOf('fresh_2')), 'f2');
});

test('a batch that fails as a whole is sent again one write at a time', async () => {
  const batcher = new WriteBatcher(s.svc.catalog.pool);
  const results = await Promise.allSettled([
    batcher.write(write('fb_slot_a', 'a')),
    batcher.write(write('fb_slot_b', 'b')),
    batcher.write(write('fb_1', 'one')),
    // A row the database refuses (created_by is NOT NULL) fails the whole statement of its batch.
    batcher.write(write('fb_bad', 'bad', { actor: null as unknown as string })),
    batcher.write(write('fb_2', 'two')),
  ]);
  assert.equal(batcher.stats.fallbacks, 1);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  const rows = await stored(['fb_1', 'fb_bad', 'fb_2']);
  assert.equal(rows.get(urnOf('fb_1')), 'one');
  assert.equal(rows.get(urnOf('fb_2')), 'two');
  assert.equal(rows.has(urnOf('fb_bad')), false);
});

test('writes of one aspect in one batch apply in arrival order, each keeping the one before as history', async () => {
  const batcher = new WriteBatcher(s.svc.catalog.pool);
  await Promise.all([
    batcher.write(write('ord_slot_a', 'a')),
    batcher.write(write('ord_slot_b', 'b')),
    batcher.write(write('ordered', 'v1')),
    batcher.write(write('zz_other', 'other')),
    batcher.write(write('ordered', 'v2')),
    batcher.write(write('ordered', 'v3')),
  ]);
  const versions = await sql<{ version: number; d: string }>(
    s.databaseUrl,
    `SELECT version::int, metadata->>'description' AS d FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' ORDER BY version`,
    [urnOf('ordered')],
  );
  assert.deepEqual(versions, [
    { version: 0, d: 'v3' },
    { version: 1, d: 'v1' },
    { version: 2, d: 'v2' },
  ]);
});

test('drain resolves once every queued write is committed', async () => {
  const batcher = new WriteBatcher(s.svc.catalog.pool);
  await batcher.drain(); // nothing queued: at once
  const names = Array.from({ length: 12 }, (_, i) => `drain_${i}`);
  const settled: string[] = [];
  for (const n of names) void batcher.write(write(n, `d-${n}`)).then(() => settled.push(n));
  await batcher.drain();
  assert.deepEqual([...settled].sort(), [...names].sort());
  const rows = await stored(names);
  for (const n of names) assert.equal(rows.get(urnOf(n)), `d-${n}`);
});

/**
 * A batch of plain upserts covering every case: an update, an unchanged value (keys reordered), a new
 * entity with two aspects, a new aspect of an existing entity. `prefix` keeps two copies apart.
 */
async function upsertScenario(prefix: string): Promise<AspectWrite[]> {
  const n = (x: string) => `${prefix}_${x}`;
  const same = { description: 'same', customProperties: { team: 'a' } };
  for (const w of [write(n('updated'), 'old'), write(n('unchanged'), '', { value: same }), write(n('existing'), 'has a key')]) await writeAspect(s.svc.catalog.pool, w);
  const status = (name: string): Partial<AspectWrite> => ({ aspect: 'status', value: { removed: false }, key: write(name, '').key });
  return [
    write(n('existing'), '', { ...status(n('existing')), systemMetadata: { runId: 'second' } }),
    write(n('new'), 'fresh', { systemMetadata: { runId: 'first-of-new' } }),
    write(n('new'), '', { ...status(n('new')), systemMetadata: { runId: 'second-of-new' } }),
    // The same value with its keys in another order: unchanged.
    write(n('unchanged'), '', { value: { customProperties: { team: 'a' }, description: 'same' }, systemMetadata: { runId: 'touched' } }),
    write(n('updated'), 'new'),
  ];
}

/** Every stored row of the scenario's entities, with the prefix taken out of the URNs. */
async function scenarioRows(prefix: string) {
  const rows = await sql<Record<string, unknown>>(
    s.databaseUrl,
    `SELECT replace(urn, $1, 'x_') AS urn, aspect, version::int, replace(metadata::text, $1, 'x_') AS metadata, system_metadata, created_by
       FROM aspects WHERE urn LIKE $2 ORDER BY 1, 2, 3`,
    [`${prefix}_`, `%,${prefix}\\_%`],
  );
  assert.ok(rows.length > 0);
  return rows;
}

test('a batch of upserts has the outcomes and rows of the same writes made one by one', async () => {
  const batch = await upsertScenario('set');
  const outcomes = (await writeAspects(s.svc.catalog.pool, [...batch].sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0)))).map(parseWritten);
  const byOne: Written[] = [];
  for (const w of await upsertScenario('one')) byOne.push(await writeAspect(s.svc.catalog.pool, w));
  // The batch went in URN order; compare outcomes per write.
  const sortedNames = [...batch].map((w, i) => [w.urn.replace('set_', ''), i] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const setByWrite = new Map<number, Written>(sortedNames.map(([, i], k) => [i, outcomes[k]!]));
  assert.deepEqual(batch.map((_, i) => setByWrite.get(i)), byOne);
  assert.deepEqual(byOne.map((w) => w.outcome), ['created', 'created', 'created', 'unchanged', 'updated']);
  // The version number each write left latest: an update makes the second, an unchanged value stays the first.
  assert.deepEqual(byOne.map((w) => w.version), [1, 1, 1, 1, 2]);
  assert.deepEqual(await scenarioRows('set'), await scenarioRows('one'));
  // What that means: history kept, one key for the new entity (from its first row), an unchanged value
  // only re-stamped.
  const rows = await scenarioRows('set');
  const of = (name: string, aspect: string) => rows.filter((r) => String(r.urn).includes(`,x_${name},`) && r.aspect === aspect);
  assert.deepEqual(of('updated', 'datasetProperties').map((r) => [r.version, r.metadata]), [[0, '{"description":"new"}'], [1, '{"description":"old"}']]);
  assert.deepEqual(of('new', 'datasetKey').map((r) => (r.system_metadata as { runId: string }).runId), ['first-of-new']);
  assert.deepEqual(of('unchanged', 'datasetProperties').map((r) => [r.version, (r.system_metadata as { runId: string }).runId]), [[0, 'touched']]);
});

/**
 * `SELECT svc_write_checked(…)` of a batch with the arguments writeAspects sends, set-wise where the
 * batch allows it (upserts of distinct entities, R__svc_write_checked.sql) or, with the setting
 * `svc.write_row_by_row` on, row by row.
 */
async function writeWith(way: 'set-wise' | 'row by row', ws: AspectWrite[], atomic = false): Promise<string[]> {
  const values = ws.map((_, i) => `$${i + 15}::json`).join(', ');
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  try {
    await c.query('BEGIN');
    // Counts the calls of the row-by-row write's function in this transaction: the way taken is checked.
    await c.query("SET LOCAL track_functions = 'pl'");
    if (way === 'row by row') await c.query('SET LOCAL svc.write_row_by_row = on');
    const { rows } = await c.query<{ outcomes: string[] }>(`SELECT svc_write_checked($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${values}) AS outcomes`, batchArguments(ws, atomic));
    const calls = await c.query<{ calls: string }>("SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'svc_write_aspect_row'");
    assert.equal(calls.rows.length > 0, way === 'row by row', `${way}: svc_write_aspect_row called ${calls.rows[0]?.calls ?? 0} times`);
    await c.query('COMMIT');
    return rows[0]!.outcomes;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await c.end();
  }
}

test('upserts of distinct entities written set-wise have the outcomes and rows of the row-by-row write', async () => {
  const outcomes: Record<string, string[]> = {};
  for (const [prefix, fn] of [['sw', 'set-wise'], ['rw', 'row by row']] as const) {
    const n = (x: string) => `${prefix}_${x}`;
    for (const w of [write(n('updated'), 'old'), write(n('unchanged'), 'same'), write(n('existing'), 'has a key'), write(n('stale'), 'read'), write(n('guarded'), 'kept'), write(n('guard'), 'as read')]) {
      await writeAspect(s.svc.catalog.pool, w);
    }
    const [guardText] = await sql<{ text: string }>(s.databaseUrl, "SELECT metadata::text AS text FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' AND version = 0", [urnOf(n('guard'))]);
    await writeAspect(s.svc.catalog.pool, write(n('guard'), 'changed'));
    const batch = [
      write(n('existing'), '', { aspect: 'status', value: { removed: false }, systemMetadata: { runId: 'second' } }),
      write(n('guarded'), 'refused', { guards: [{ urn: urnOf(n('guard')), aspect: 'datasetProperties', text: guardText!.text }] }),
      write(n('new'), 'fresh', { systemMetadata: { runId: 'first-of-new' } }),
      write(n('stale'), 'refused', { expected: 'not what is stored' }),
      write(n('unchanged'), 'same', { systemMetadata: { runId: 'touched' } }),
      write(n('updated'), 'new'),
    ].sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
    // All or nothing: the first stale row fails the statement, and nothing of the batch is written.
    await assert.rejects(writeWith(fn, batch, true), /datasetProperties of .*guarded.* changed meanwhile|guard.*changed meanwhile/);
    outcomes[prefix] = (await writeWith(fn, batch)).map((o) => o.replace(`${prefix}_`, 'x_'));
  }
  assert.deepEqual(outcomes.sw, outcomes.rw);
  assert.deepEqual(
    outcomes.sw!.map((o) => o.replace(/ of .*/, '')),
    ['created:1', 'stale:datasetProperties', 'created:1', 'stale:datasetProperties', 'unchanged:1', 'updated:2'],
  );
  assert.deepEqual(await scenarioRows('sw'), await scenarioRows('rw'));
});

test('an atomic batch of several aspects of each entity written set-wise has the outcomes and rows of the row-by-row write', async () => {
  const outcomes: Record<string, string[]> = {};
  for (const [prefix, fn] of [['msw', 'set-wise'], ['mrw', 'row by row']] as const) {
    const n = (x: string) => `${prefix}_${x}`;
    for (const w of [write(n('existing'), 'old'), write(n('existing'), '', { aspect: 'status', value: { removed: false } }), write(n('guard'), 'as read')]) await writeAspect(s.svc.catalog.pool, w);
    const [guardText] = await sql<{ text: string }>(s.databaseUrl, "SELECT metadata::text AS text FROM aspects WHERE urn = $1 AND aspect = 'datasetProperties' AND version = 0", [urnOf(n('guard'))]);
    const keyRow = (name: string): Partial<AspectWrite> => ({ aspect: 'datasetKey', value: write(name, '').key, systemMetadata: { runId: 'key-row' } });
    const batch = [
      // A new entity with its key written first, as DataHub's ingestion sends it, then two aspects.
      write(n('keyed'), '', keyRow(n('keyed'))),
      write(n('keyed'), 'fresh', { guards: [{ urn: urnOf(n('guard')), aspect: 'datasetProperties', text: guardText!.text }] }),
      write(n('keyed'), '', { aspect: 'subTypes', value: { typeNames: ['Table'] } }),
      // An existing entity: an update, an unchanged status, a new aspect.
      write(n('existing'), 'new'),
      write(n('existing'), '', { aspect: 'status', value: { removed: false }, systemMetadata: { runId: 'touched' } }),
      write(n('existing'), '', { aspect: 'globalTags', value: { tags: [] } }),
      // A new entity without its key in the batch: the key comes from its first row.
      write(n('unkeyed'), 'first', { systemMetadata: { runId: 'first-of-unkeyed' } }),
      write(n('unkeyed'), '', { aspect: 'status', value: { removed: false }, systemMetadata: { runId: 'second-of-unkeyed' } }),
    ];
    outcomes[prefix] = (await writeWith(fn, batch, true)).map((o) => o.replace(`${prefix}_`, 'x_'));
    // All or nothing: a stale row among several aspects of an entity fails the whole batch, naming it.
    const stale = [write(n('existing'), 'refused', { expected: 'not what is stored' }), write(n('existing'), '', { aspect: 'subTypes', value: { typeNames: ['View'] } })];
    await assert.rejects(writeWith(fn, stale, true), /datasetProperties of .*existing.* was written meanwhile/);
  }
  assert.deepEqual(outcomes.msw, outcomes.mrw);
  assert.deepEqual(outcomes.msw, ['created:1', 'created:1', 'created:1', 'updated:2', 'unchanged:1', 'created:1', 'created:1', 'created:1']);
  assert.deepEqual(await scenarioRows('msw'), await scenarioRows('mrw'));
  const rows = await scenarioRows('msw');
  const keyOf = (name: string) => rows.filter((r) => String(r.urn).includes(`,x_${name},`) && r.aspect === 'datasetKey').map((r) => (r.system_metadata as { runId: string }).runId);
  assert.deepEqual([keyOf('keyed'), keyOf('unkeyed')], [['key-row'], ['first-of-unkeyed']]);
});

test('concurrent HTTP writes: CREATE of one aspect succeeds once, upserts of distinct entities all land', async () => {
  const path = (name: string, create: boolean) => `/openapi/v3/entity/dataset/${enc(urnOf(name))}/datasetProperties?createIfNotExists=${create}`;
  const creates = await Promise.all(
    Array.from({ length: 40 }, (_, i) => s.request(path('http_contended', true), { method: 'POST', body: JSON.stringify({ value: { description: `c${i}` } }) })),
  );
  const statuses = creates.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, ...Array(39).fill(412)]);
  const names = Array.from({ length: 60 }, (_, i) => `http_${i}`);
  const upserts = await Promise.all(names.map((n) => s.request(path(n, false), { method: 'POST', body: JSON.stringify({ value: { description: `u-${n}` } }) })));
  assert.deepEqual([...new Set(upserts.map((r) => r.status))], [200]);
  for (const [i, r] of upserts.entries()) {
    assert.deepEqual(await r.json(), { urn: urnOf(names[i]!), datasetProperties: { value: { description: `u-${names[i]}` } } });
  }
  const rows = await stored(names);
  assert.equal(rows.size, 60);
  // The group commit's counters are exported.
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  const writes = Number(metrics.match(/^svc_db_grouped_writes_total (\d+)/m)?.[1]);
  const statements = Number(metrics.match(/^svc_db_grouped_write_statements_total (\d+)/m)?.[1]);
  assert.ok(writes >= 100, `grouped writes: ${writes}`);
  assert.ok(statements >= 1 && statements <= writes, `statements: ${statements}`);
});
