/**
 * The StructuredProperty controller against the real kube-apiserver and a real svc server (Postgres):
 * create, update, drift repair, a lowered version, breaking changes, adoption, each deletion policy,
 * the unmanaged annotation, two objects claiming one qualified name (the newer takes over when the
 * older goes or is released), a 409 while a hard delete's values are removed, a 409 while finalizing,
 * and a server outage.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { FINALIZER, type StructuredProperty } from '../../operator/src/resources.ts';
import type { Operator } from '../../operator/src/operator.ts';
import { pollUntil } from '../support/poll.ts';
import { createEntity, createProperty, datasetUrn, propertyUrn, readValues, setValues, writeDefinition, definitionOf } from '../support/structuredProperties.ts';
import { enc, startTestServer, type TestServer } from '../support/testServer.ts';
import {
  condition,
  createNamespace,
  createObject,
  deleteObject,
  eventReasons,
  eventsApi,
  getObject,
  installCrds,
  patchObject,
  readyNow,
  startTestOperator,
  waitProperty,
} from '../support/operator.ts';

const SP = 'structuredproperties';
let server: TestServer;
let operator: Operator;
let ns: string;
let seq = 0;
const qn = () => `op.test.p${++seq}.${Date.now()}`;

/** The definition the server holds (undefined when it has none) and whether it is soft deleted. */
async function stored(qualifiedName: string): Promise<{ definition?: Record<string, unknown>; removed: boolean } | undefined> {
  const res = await server.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(qualifiedName))}?systemMetadata=false`);
  if (res.status === 404) return undefined;
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { propertyDefinition?: { value: Record<string, unknown> }; status?: { value: { removed?: boolean } } };
  return { definition: body.propertyDefinition?.value, removed: body.status?.value.removed === true };
}

function property(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Promise<StructuredProperty> {
  return createObject<StructuredProperty>(ns, SP, { metadata: { name, ...metadata }, spec });
}

/** The advisory lock a write of `$1` takes on its entity (db/locks.ts), as `pg_locks` shows it: two halves of the key. */
const HOLDS_ENTITY_LOCK = `l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND ((l.classid::int8 << 32) | l.objid::int8) = hashtextextended($1, 0)`;

/**
 * Makes the soft delete of a property (`POST …/status`, one write statement outside any transaction,
 * which the server answers 409 when Postgres aborts it as a deadlock victim: db/pool.ts, dbError)
 * deadlock with transactions of the test's own, once per {@link deadlock} call. The statement takes
 * the property's entity lock, then the lock of its `status` row. `rows` holds that row lock all along;
 * `table` holds the aspects table (SHARE) so that the statement waits between its two locks, while
 * `rows` asks for the entity lock; when `table` lets go, the statement waits for `rows`, which waits
 * for it. Only the statement's deadlock check is due (`rows` checks after an hour), so it is the
 * statement Postgres aborts, whatever the timing.
 */
class SoftDeleteDeadlock {
  private holdsEntityLock = false;

  private constructor(
    private readonly urn: string,
    private readonly rows: pg.Client,
    private readonly table: pg.Client,
    private readonly watch: pg.Client,
    private readonly pids: { rows: number; table: number },
  ) {}

  /** Takes the lock of the property's `status` row (which must exist) in a transaction that waits for its locks without a deadlock check of its own. */
  static async open(databaseUrl: string, urn: string): Promise<SoftDeleteDeadlock> {
    const [rows, table, watch] = [0, 1, 2].map(() => new pg.Client({ connectionString: databaseUrl }));
    for (const c of [rows!, table!, watch!]) {
      // A backend terminated by close() is an 'error' event on its client.
      c.on('error', () => undefined);
      await c.connect();
    }
    const pid = async (c: pg.Client) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const d = new SoftDeleteDeadlock(urn, rows!, table!, watch!, { rows: await pid(rows!), table: await pid(table!) });
    try {
      await rows!.query('BEGIN');
      await rows!.query("SET LOCAL deadlock_timeout = '1h'");
      await rows!.query("SET LOCAL lock_timeout = '20s'");
      const locked = await rows!.query("SELECT 1 FROM aspects WHERE urn = $1 AND aspect = 'status' AND version = 0 FOR UPDATE", [urn]);
      assert.equal(locked.rowCount, 1, 'the status row exists');
    } catch (err) {
      await d.close();
      throw err;
    }
    return d;
  }

  /**
   * Lets the soft delete (its first attempt, or the retry waiting for the entity lock) into a deadlock;
   * resolves once Postgres aborted it. The first time, `start` makes the soft delete happen once the
   * table is held: a statement already writing the table when the test asks for it would hold it off,
   * waiting for `rows` in turn, and no deadlock check ends that.
   */
  async deadlock(start?: () => Promise<unknown>): Promise<void> {
    await this.table.query('BEGIN');
    await this.table.query("SET LOCAL lock_timeout = '10s'");
    await this.table.query('LOCK TABLE aspects IN SHARE MODE');
    await start?.();
    if (this.holdsEntityLock) {
      await this.retried();
      await this.rows.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [this.urn]);
      this.holdsEntityLock = false;
    }
    await pollUntil(
      'the soft delete holding the entity lock, waiting for the table',
      async () => (await this.watch.query(`SELECT l.pid FROM pg_locks l WHERE ${HOLDS_ENTITY_LOCK} AND $2 = ANY(pg_blocking_pids(l.pid))`, [this.urn, this.pids.table])).rowCount,
      (n) => n === 1,
    );
    const granted = this.rows.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [this.urn]);
    granted.catch(() => undefined); // awaited below; a close() in between must not leave it unhandled
    await pollUntil(
      'the test waiting for the entity lock',
      async () => (await this.watch.query<{ n: number }>('SELECT cardinality(pg_blocking_pids($1)) AS n', [this.pids.rows])).rows[0]!.n,
      (n) => n > 0,
    );
    await this.table.query('COMMIT');
    // The statement could not commit without the row lock `rows` holds: the entity lock is free because Postgres aborted it.
    await granted;
    this.holdsEntityLock = true;
  }

  /** Waits until the soft delete, retried, waits for the entity lock the test holds since the last deadlock. */
  async retried(): Promise<void> {
    await pollUntil(
      'the soft delete retried, waiting for the entity lock',
      async () => (await this.watch.query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [this.pids.rows])).rowCount,
      (n) => n === 1,
    );
  }

  /** Lets go of the locks: the soft delete waiting for them goes through. */
  async release(): Promise<void> {
    await this.rows.query('SELECT pg_advisory_unlock_all()');
    await this.rows.query('COMMIT');
  }

  /** Ends the test's backends (whatever they wait for, their locks go with them). */
  async close(): Promise<void> {
    await this.watch.query('SELECT pg_terminate_backend(p, 10000) FROM unnest($1::int[]) AS p', [[this.pids.rows, this.pids.table]]).catch(() => undefined);
    await Promise.all([this.rows, this.table, this.watch].map((c) => c.end().catch(() => undefined)));
  }
}

before(async () => {
  await installCrds();
  server = await startTestServer();
  ns = await createNamespace('sp');
  // Resync every second, so that drift is repaired within the test's patience.
  operator = await startTestOperator(server.url, ns, { SVC_OPERATOR_RESYNC_SECONDS: '1' });
});

after(async () => {
  await operator?.stop();
  await server?.close();
});

describe('StructuredProperty', () => {
  test('creates the definition from short forms, with the finalizer first and the normalised URNs in status', async () => {
    const name = qn();
    await property('retention', {
      qualifiedName: name,
      valueType: 'number',
      cardinality: 'MULTIPLE',
      entityTypes: ['dataset', 'dataFlow'],
      allowedValues: [{ numberValue: 30, description: '30 days' }, { numberValue: 365 }],
      displayName: 'Retention Time',
    });
    const o = await waitProperty(ns, 'retention', 'Ready', readyNow);
    assert.deepEqual(o.metadata.finalizers, [FINALIZER]);
    assert.equal(o.status!.urn, propertyUrn(name));
    assert.equal(o.status!.valueType, 'urn:li:dataType:svc.number');
    assert.deepEqual(o.status!.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
    assert.equal(condition(o, 'Synced')?.reason, 'Created');
    const s = await stored(name);
    assert.deepEqual(s?.definition, {
      qualifiedName: name,
      valueType: 'urn:li:dataType:svc.number',
      cardinality: 'MULTIPLE',
      entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
      allowedValues: [{ value: { double: 30 }, description: '30 days' }, { value: { double: 365 } }],
      displayName: 'Retention Time',
    });
    assert.ok((await eventReasons(ns, 'retention')).includes('Created'));
  });

  test('a spec change is written, and observedGeneration follows it', async () => {
    const name = qn();
    await property('renamed', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], displayName: 'Before' });
    const first = await waitProperty(ns, 'renamed', 'Ready', readyNow);
    const readySince = condition(first, 'Ready')!.lastTransitionTime;
    await patchObject(ns, SP, 'renamed', { spec: { displayName: 'After', entityTypes: ['dataset', 'chart'] } });
    const o = await waitProperty(ns, 'renamed', 'generation 2 synced', (x) => readyNow(x) && x.status!.observedGeneration === 2);
    assert.equal(condition(o, 'Ready')!.lastTransitionTime, readySince, 'Ready stayed True: its transition time does not move');
    const s = await stored(name);
    assert.equal(s?.definition?.displayName, 'After');
    assert.deepEqual(s?.definition?.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.chart']);
  });

  test('a definition changed through the API is put back to the spec (drift)', async () => {
    const name = qn();
    await property('drift', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'from git' });
    await waitProperty(ns, 'drift', 'Ready', readyNow);
    const res = await writeDefinition(server, propertyUrn(name), definitionOf(name, { description: 'changed by hand' }));
    assert.equal(res.status, 200, await res.text());
    await pollUntil('drift repaired', () => stored(name), (s) => s?.definition?.description === 'from git', 20_000);
    // Soft deleted through the API: restored too.
    const del = await server.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(name))}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: true } }) });
    assert.equal(del.status, 200, await del.text());
    await pollUntil('soft delete undone', () => stored(name), (s) => s?.removed === false, 20_000);
  });

  test('a lowered or removed spec.version is written once: the server keeps the higher one, and resyncs find it up to date', async () => {
    const name = qn();
    await property('lowered', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], version: '20260201000000' });
    await waitProperty(ns, 'lowered', 'Ready', readyNow);
    await patchObject(ns, SP, 'lowered', { spec: { version: '20260101000000', description: 'with a lower version' } });
    // Resyncs come every second: a spec compared as written would be rewritten ("Updated") at each one.
    const o = await waitProperty(ns, 'lowered', 'up to date at generation 2', (x) => readyNow(x) && x.status!.observedGeneration === 2 && condition(x, 'Synced')?.reason === 'UpToDate');
    assert.equal(o.status!.version, '20260201000000', 'the version the server holds');
    const s = await stored(name);
    assert.equal(s?.definition?.description, 'with a lower version');
    assert.equal(s?.definition?.version, '20260201000000');
    await patchObject(ns, SP, 'lowered', { spec: { version: null } });
    await waitProperty(ns, 'lowered', 'up to date at generation 3', (x) => readyNow(x) && x.status!.observedGeneration === 3 && condition(x, 'Synced')?.reason === 'UpToDate');
    const synced = (await getObject<StructuredProperty>(ns, SP, 'lowered'))!.status!.lastSyncTime;
    await new Promise((r) => setTimeout(r, 2_500));
    const later = (await getObject<StructuredProperty>(ns, SP, 'lowered'))!;
    assert.equal(condition(later, 'Synced')?.reason, 'UpToDate');
    assert.equal(later.status!.lastSyncTime, synced, 'nothing written at the resyncs');
  });

  test('a qualified name whose hard-deleted values are still being removed (409) is retried until it is free', async () => {
    const name = qn();
    const urn = propertyUrn(name);
    await createProperty(server, name);
    const dataset = await createEntity(server, 'dataset', datasetUrn(`cleanup_${seq}`));
    assert.equal((await setValues(server, dataset, [{ propertyUrn: urn, values: [{ string: 'old' }] }])).status, 200);
    // The dataset's entity lock held: the value cleanup of the hard delete cannot finish meanwhile.
    const blocker = new pg.Client({ connectionString: server.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [dataset]);
      const del = await server.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}`, { method: 'DELETE' });
      assert.equal(del.status, 200, await del.text());
      await property('recreated', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'after the cleanup' });
      const waiting = await waitProperty(ns, 'recreated', 'Conflict', (x) => condition(x, 'Ready')?.reason === 'Conflict');
      assert.equal(condition(waiting, 'Ready')!.status, 'False');
      assert.match(condition(waiting, 'Ready')!.message, /was hard deleted and its values are still being removed/);
    } finally {
      await blocker.query('COMMIT').catch(() => undefined);
      await blocker.end();
    }
    await waitProperty(ns, 'recreated', 'Ready once the cleanup has finished', readyNow, 60_000);
    assert.equal((await stored(name))?.definition?.description, 'after the cleanup');
    assert.deepEqual(await readValues(server, dataset), [], 'the old values stay removed');
  });

  test('adopts a property that already exists under the same qualified name', async () => {
    const name = qn();
    await createProperty(server, name, { description: 'made before the operator' });
    await property('adopted', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'now from git' });
    const o = await waitProperty(ns, 'adopted', 'Ready', readyNow);
    assert.equal(condition(o, 'Synced')?.reason, 'Adopted');
    assert.equal((await stored(name))?.definition?.description, 'now from git');
  });

  test('the Soft policy soft-deletes the definition, and re-creating the object restores it', async () => {
    const name = qn();
    await property('soft', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'] });
    await waitProperty(ns, 'soft', 'Ready', readyNow);
    await deleteObject(ns, SP, 'soft');
    await pollUntil('object gone', () => getObject(ns, SP, 'soft'), (o) => o === undefined);
    const s = await stored(name);
    assert.equal(s?.removed, true);
    assert.ok(s?.definition, 'a soft delete keeps the definition');
    await property('soft', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'] });
    await waitProperty(ns, 'soft', 'Ready', readyNow);
    assert.equal((await stored(name))?.removed, false);
    // Deleted again, then re-created with another spec: restored and written, each said.
    await deleteObject(ns, SP, 'soft');
    await pollUntil('object gone', () => getObject(ns, SP, 'soft'), (o) => o === undefined);
    await property('soft', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'another spec' });
    await waitProperty(ns, 'soft', 'Ready', readyNow);
    assert.deepEqual(await stored(name), { definition: definitionOf(name, { description: 'another spec' }), removed: false });
    const reasons = await pollUntil('the events of the restore and the write', () => eventReasons(ns, 'soft'), (r) => r.filter((x) => x === 'Restored').length === 2 && r.includes('Adopted'));
    assert.ok(reasons.includes('Adopted'), reasons.join(', '));
  });

  test('the Hard policy removes the definition and its values before the object goes', async () => {
    const name = qn();
    await property('hard', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], deletionPolicy: 'Hard' });
    await waitProperty(ns, 'hard', 'Ready', readyNow);
    const dataset = await createEntity(server, 'dataset', datasetUrn(`hard_${seq}`));
    const set = await setValues(server, dataset, [{ propertyUrn: propertyUrn(name), values: [{ string: 'x' }] }]);
    assert.equal(set.status, 200, await set.text());
    await deleteObject(ns, SP, 'hard');
    await pollUntil('object gone', () => getObject(ns, SP, 'hard'), (o) => o === undefined, 30_000);
    assert.equal(await stored(name), undefined, 'the definition is gone');
    const tasks = (await (await server.request(`/api/tasks?subject=${enc(propertyUrn(name))}`)).json()) as { tasks: { state: string }[] };
    assert.ok(tasks.tasks.length > 0 && tasks.tasks.every((t) => t.state === 'SUCCEEDED'), JSON.stringify(tasks));
    assert.deepEqual(await readValues(server, dataset), [], 'the values were cleaned up');
  });

  test('the Orphan policy leaves the definition as it is', async () => {
    const name = qn();
    await property('orphan', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], deletionPolicy: 'Orphan' });
    await waitProperty(ns, 'orphan', 'Ready', readyNow);
    await deleteObject(ns, SP, 'orphan');
    await pollUntil('object gone', () => getObject(ns, SP, 'orphan'), (o) => o === undefined);
    assert.deepEqual(await stored(name), { definition: definitionOf(name), removed: false });
  });

  test('managed: "false" releases the property: no writes, and deletion has no side effect', async () => {
    const name = qn();
    await property('released', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'one' });
    await waitProperty(ns, 'released', 'Ready', readyNow);
    await patchObject(ns, SP, 'released', { metadata: { annotations: { 'catalog.svc.dev/managed': 'false' } }, spec: { description: 'two' } });
    const o = await waitProperty(ns, 'released', 'Unmanaged', (x) => condition(x, 'Ready')?.reason === 'Unmanaged');
    assert.deepEqual(o.metadata.finalizers ?? [], []);
    // Synced no longer says the spec is in the catalog: the operator stopped looking.
    assert.deepEqual([condition(o, 'Synced')?.status, condition(o, 'Synced')?.reason], ['Unknown', 'Unmanaged']);
    assert.equal((await stored(name))?.definition?.description, 'one');
    await deleteObject(ns, SP, 'released');
    await pollUntil('object gone', () => getObject(ns, SP, 'released'), (x) => x === undefined);
    assert.deepEqual(await stored(name), { definition: definitionOf(name, { description: 'one' }), removed: false });
  });

  test('of two objects with one qualified name, the older keeps it; the newer takes over when it goes', async () => {
    const name = qn();
    await property('first', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'first', deletionPolicy: 'Orphan' });
    await waitProperty(ns, 'first', 'Ready', readyNow);
    await property('second', { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'second' });
    const second = await waitProperty(ns, 'second', 'conflict', (x) => condition(x, 'Ready')?.reason === 'ResourceConflict');
    assert.equal(condition(second, 'Ready')!.status, 'False');
    assert.match(condition(second, 'Ready')!.message, new RegExp(`${ns}/first`));
    assert.ok((await eventReasons(ns, 'second')).includes('ResourceConflict'));
    assert.equal((await stored(name))?.definition?.description, 'first', 'nothing written by the newer object');
    await deleteObject(ns, SP, 'first');
    await waitProperty(ns, 'second', 'took over', readyNow);
    assert.equal((await stored(name))?.definition?.description, 'second');
  });
});

describe('StructuredProperty, one object at a time', () => {
  let own: Operator;
  let ns2: string;
  before(async () => {
    ns2 = await createNamespace('sp-alone');
    own = await startTestOperator(server.url, ns2, { SVC_OPERATOR_RESYNC_SECONDS: '600' });
  });
  after(() => own?.stop());

  const reconciles = async () => {
    const text = (await own.metrics.expose()).body;
    return [...text.matchAll(/^controller_runtime_reconcile_total\{controller="structuredproperty",result="[a-z_]+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };

  test('a breaking change is refused once, not retried in a loop, and accepted with a greater version', async () => {
    const name = qn();
    await createObject(ns2, SP, { metadata: { name: 'typed' }, spec: { qualifiedName: name, valueType: 'number', entityTypes: ['dataset'] } });
    await waitProperty(ns2, 'typed', 'Ready', readyNow);
    await patchObject(ns2, SP, 'typed', { spec: { valueType: 'string' } });
    const refused = await waitProperty(ns2, 'typed', 'refused', (x) => condition(x, 'Ready')?.reason === 'BreakingChangeRejected' && x.status!.observedGeneration === 2);
    assert.equal(condition(refused, 'Ready')!.status, 'False');
    assert.match(condition(refused, 'Ready')!.message, /Value type cannot be changed as this is a backwards incompatible change/);
    assert.ok((await eventReasons(ns2, 'typed')).includes('BreakingChangeRejected'));
    assert.equal((await stored(name))?.definition?.valueType, 'urn:li:dataType:svc.number');
    const before = await reconciles();
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(await reconciles(), before, 'no reconcile while nothing changes');
    await patchObject(ns2, SP, 'typed', { spec: { version: '20260101000000' } });
    const accepted = await waitProperty(ns2, 'typed', 'accepted', (x) => readyNow(x) && x.status!.observedGeneration === 3);
    assert.equal(accepted.status!.version, '20260101000000');
    assert.equal((await stored(name))?.definition?.valueType, 'urn:li:dataType:svc.string');
  });

  test('of two objects with one qualified name, the newer takes over when the older is released (managed: "false"), at once: no resync needed', async () => {
    const name = qn();
    await createObject(ns2, SP, { metadata: { name: 'keeper' }, spec: { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'keeper' } });
    await waitProperty(ns2, 'keeper', 'Ready', readyNow);
    await createObject(ns2, SP, { metadata: { name: 'waiter' }, spec: { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'waiter' } });
    await waitProperty(ns2, 'waiter', 'conflict', (x) => condition(x, 'Ready')?.reason === 'ResourceConflict');
    await patchObject(ns2, SP, 'keeper', { metadata: { annotations: { 'catalog.svc.dev/managed': 'false' } } });
    await waitProperty(ns2, 'waiter', 'took over', readyNow);
    assert.equal((await stored(name))?.definition?.description, 'waiter');
  });

  test('a 409 while finalizing (the soft delete lost a deadlock) is Conflict: Ready=False, one Warning event, and the finalizer stays until the delete goes through', async () => {
    const name = qn();
    const urn = propertyUrn(name);
    await createObject(ns2, SP, { metadata: { name: 'finalizing' }, spec: { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'] } });
    await waitProperty(ns2, 'finalizing', 'Ready', readyNow);
    // A status row (not removed), which the soft delete then updates under its row lock.
    const status = await server.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed: false } }) });
    assert.equal(status.status, 200, await status.text());
    const deadlocks = await SoftDeleteDeadlock.open(server.databaseUrl, urn);
    try {
      // Two 409s in a row: the second must not record the event again.
      await deadlocks.deadlock(() => deleteObject(ns2, SP, 'finalizing'));
      await deadlocks.deadlock();
      // The third attempt waits: the operator has dealt with the second 409.
      await deadlocks.retried();
      const o = await waitProperty(ns2, 'finalizing', 'Conflict', (x) => condition(x, 'Ready')?.reason === 'Conflict');
      assert.equal(condition(o, 'Ready')!.status, 'False');
      assert.match(condition(o, 'Ready')!.message, /\(409\), retrying: The write conflicted with a concurrent one/);
      assert.equal(condition(o, 'Synced')!.status, 'False');
      assert.equal(condition(o, 'Synced')!.reason, 'Conflict');
      assert.ok(o.metadata.deletionTimestamp);
      assert.deepEqual(o.metadata.finalizers, [FINALIZER], 'the finalizer stays while the delete is refused');
      const events = (await eventsApi.listNamespacedEvent({ namespace: ns2, fieldSelector: 'regarding.name=finalizing' })).items.filter((e) => e.reason === 'Conflict');
      assert.equal(events.length, 1, JSON.stringify(events.map((e) => e.note)));
      assert.equal(events[0]!.type, 'Warning');
      assert.equal((await stored(name))?.removed, false, 'nothing soft deleted yet');
      await deadlocks.release();
    } finally {
      await deadlocks.close();
    }
    await pollUntil('object gone', () => getObject(ns2, SP, 'finalizing'), (x) => x === undefined);
    assert.equal((await stored(name))?.removed, true);
  });

  test('a server outage leaves Ready=Unknown, and the change lands once the server is back', async () => {
    const name = qn();
    await createObject(ns2, SP, { metadata: { name: 'outage' }, spec: { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'], description: 'before' } });
    await waitProperty(ns2, 'outage', 'Ready', readyNow);
    const port = new URL(server.url).port;
    const databaseUrl = server.databaseUrl;
    await server.close();
    try {
      await patchObject(ns2, SP, 'outage', { spec: { description: 'during' } });
      const down = await waitProperty(ns2, 'outage', 'Unknown', (x) => condition(x, 'Ready')?.status === 'Unknown');
      assert.equal(condition(down, 'Ready')!.reason, 'ServerUnavailable');
      assert.match(condition(down, 'Ready')!.message, /cannot reach the server/);
    } finally {
      server = await startTestServer({ PORT: port, DATABASE_URL: databaseUrl });
    }
    await waitProperty(ns2, 'outage', 'Ready again', (x) => readyNow(x) && x.status!.observedGeneration === 2, 60_000);
    assert.equal((await stored(name))?.definition?.description, 'during');
  });
});
