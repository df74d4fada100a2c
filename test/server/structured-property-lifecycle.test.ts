/**
 * The lifecycle of a structured property through HTTP (seed-interface.md, States and transitions;
 * datahub-behaviour.md §3 and §4.3; DECISIONS.md): soft delete and restore, hard delete with its
 * durable cleanup task (and the 409 refusal of re-creation while that task is open), and a versioned
 * breaking change that hides older values at once and deletes them in a task. Tasks are observed through
 * GET /api/tasks?subject=<urn>. A rejected request changes nothing (database fingerprint before/after).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { expectRejected, expectValidationError } from '../support/expectRejected.ts';
import {
  addOp,
  createDataset,
  createEntity,
  createProperty,
  definitionOf,
  patchValues,
  propertyUrn,
  readValues,
  removeOp,
  retentionTimeDefinition,
  setValues,
  writeDefinition,
  type ApiVersion,
  type Assignment,
} from '../support/structuredProperties.ts';
import { enc, sql, startTestServer, text, type TestServer, expectMissing } from '../support/testServer.ts';
import { HARD_DELETE_TASK, STALE_VALUES_TASK, tasksOf, waitForTask, type Task } from '../support/tasks.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});


/** P7: writes the property's status (soft delete or restore). */
function writeStatus(urn: string, removed: boolean, v: ApiVersion = 'v3'): Promise<Response> {
  return s.request(`/openapi/${v}/entity/structuredProperty/${enc(urn)}/status?systemMetadata=false&createIfNotExists=false`, {
    method: 'POST',
    body: JSON.stringify(v === 'v3' ? { value: { removed } } : { removed }),
  });
}

/** P8: hard delete. */
function hardDelete(urn: string): Promise<Response> {
  return s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}`, { method: 'DELETE' });
}

/** The stored (unfiltered) latest structuredProperties aspect of an entity, straight from the database. */
async function storedValues(urn: string): Promise<Assignment[]> {
  const rows = await sql<{ metadata: { properties: Assignment[] } }>(
    s.databaseUrl,
    "SELECT metadata FROM aspects WHERE urn = $1 AND aspect = 'structuredProperties' AND version = 0",
    [urn],
  );
  return rows[0]?.metadata.properties ?? [];
}

/** How many entities the record of assignments says hold values of `propertyUrn`. */
async function valueRowCount(propertyUrn: string): Promise<number> {
  const [row] = await sql<{ n: number }>(s.databaseUrl, 'SELECT count(*)::int AS n FROM structured_property_assignments WHERE property_urn = $1', [propertyUrn]);
  return row!.n;
}

/** The fields of a task a test asserts on. */
const summary = (t: Task) => ({ kind: t.kind, subject: t.subject, state: t.state, total: t.total, done: t.done, error: t.error });

describe('soft delete and restore', () => {
  test('soft delete and restore answer the status on v3 and v2', async () => {
    const p = await createProperty(s, 'test.life.statusShapes');
    assert.deepEqual(JSON.parse(await text(await writeStatus(p, true, 'v3'), 200)), { urn: p, status: { value: { removed: true } } });
    assert.deepEqual(JSON.parse(await text(await writeStatus(p, false, 'v2'), 200)), { urn: p, aspects: { status: { value: { removed: false } } } });
    assert.deepEqual(JSON.parse(await text(await writeStatus(p, true, 'v2'), 200)), { urn: p, aspects: { status: { value: { removed: true } } } });
    assert.deepEqual(JSON.parse(await text(await writeStatus(p, false, 'v3'), 200)), { urn: p, status: { value: { removed: false } } });
  });

  test('hides the values of a soft-deleted property on every read, keeping what is stored', async () => {
    const p = await createProperty(s, 'test.life.softHidden');
    const q = await createProperty(s, 'test.life.softHiddenOther');
    const both = await createDataset(s, 'soft_hidden_both');
    const only = await createDataset(s, 'soft_hidden_only');
    await text(await setValues(s, both, [{ propertyUrn: p, values: [{ string: 'p' }] }, { propertyUrn: q, values: [{ string: 'q' }] }]), 200);
    await text(await setValues(s, only, [{ propertyUrn: p, values: [{ string: 'p' }] }]), 200);
    await text(await writeStatus(p, true), 200);

    assert.deepEqual(await readValues(s, both), [{ propertyUrn: q, values: [{ string: 'q' }] }]);
    assert.deepEqual(await readValues(s, only), []);
    const v3Aspect = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(only)}/structuredProperties`), 200));
    assert.deepEqual(v3Aspect, { urn: only, structuredProperties: { value: { properties: [] } } });
    const entity = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(both)}?aspects=structuredProperties`), 200));
    assert.deepEqual(entity.structuredProperties.value.properties, [{ propertyUrn: q, values: [{ string: 'q' }] }]);
    const list = JSON.parse(await text(await s.request('/openapi/v3/entity/dataset?aspects=structuredProperties&count=1000'), 200));
    const listed = list.entities.find((e: { urn: string }) => e.urn === both);
    assert.deepEqual(listed.structuredProperties.value.properties, [{ propertyUrn: q, values: [{ string: 'q' }] }]);

    assert.deepEqual((await storedValues(both)).map((a) => a.propertyUrn).sort(), [p, q].sort(), 'the stored aspect keeps the hidden value');
  });

  test('rejects an update of a soft-deleted definition', async () => {
    const qn = 'test.life.softNoUpdate';
    const p = await createProperty(s, qn);
    await text(await writeStatus(p, true), 200);
    for (const v of ['v3', 'v2'] as const) {
      await expectValidationError(s, () => writeDefinition(s, p, definitionOf(qn, { displayName: 'changed' }), v), 400, 'Cannot mutate a soft deleted Structured Property Definition');
    }
  });

  test('rejects a value of a soft-deleted property, by set on v3 and v2 and by patch', async () => {
    const p = await createProperty(s, 'test.life.softNoValue');
    const ds = await createDataset(s, 'soft_no_value');
    await text(await writeStatus(p, true), 200);
    for (const v of ['v3', 'v2'] as const) {
      await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'x' }] }], v), 400, 'Cannot apply a soft deleted Structured Property value');
    }
    await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'x' }])]), 400, 'Cannot apply a soft deleted Structured Property value');
  });

  test('restoring with removed=false brings the values back and makes the property usable', async () => {
    const qn = 'test.life.restoreFalse';
    const p = await createProperty(s, qn);
    const ds = await createDataset(s, 'restore_false');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'kept' }] }]), 200);
    await text(await writeStatus(p, true), 200);
    assert.deepEqual(await readValues(s, ds), []);
    await text(await writeStatus(p, false), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'kept' }] }]);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'new' }] }]), 200);
    await text(await writeDefinition(s, p, definitionOf(qn, { displayName: 'updated after restore' })), 200);
  });

  test('restoring by deleting the status aspect makes the property usable again', async () => {
    const p = await createProperty(s, 'test.life.restoreDelete');
    const ds = await createDataset(s, 'restore_delete');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'kept' }] }]), 200);
    await text(await writeStatus(p, true), 200);
    assert.equal(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}/status`, { method: 'DELETE' }), 200), '');
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'kept' }] }]);
    await text(await patchValues(s, ds, [addOp(p, [{ string: 'patched' }])]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'patched' }] }]);
  });

  test('a set on an entity during a soft delete loses no value of the soft-deleted property', async () => {
    const p = await createProperty(s, 'test.life.softKeptOnSet');
    const q = await createProperty(s, 'test.life.softKeptOnSetOther');
    const ds = await createDataset(s, 'soft_kept_on_set');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'hidden' }] }]), 200);
    await text(await writeStatus(p, true), 200);
    const res = JSON.parse(await text(await setValues(s, ds, [{ propertyUrn: q, values: [{ string: 'visible' }] }]), 200));
    assert.deepEqual(res.structuredProperties.value.properties, [{ propertyUrn: q, values: [{ string: 'visible' }] }]);
    await text(await writeStatus(p, false), 200);
    const values = (await readValues(s, ds)) as { propertyUrn: string }[];
    assert.deepEqual(values.map((a) => a.propertyUrn).sort(), [p, q].sort());
  });

  test('a patch acts on the values as read: removing a hidden value is refused, and a restore loses nothing', async () => {
    const p = propertyUrn('test.life.softPatchRemove');
    await text(await writeDefinition(s, p, retentionTimeDefinition('test.life.softPatchRemove')), 200);
    const q = await createProperty(s, 'test.life.softPatchRemoveOther');
    const ds = await createDataset(s, 'soft_patch_remove');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ double: 60 }] }]), 200);
    await text(await writeStatus(p, true), 200);

    await expectValidationError(s, () => patchValues(s, ds, [removeOp(p)]), 400, `path /properties/${p} does not exist`);
    // A patch of another property keeps the hidden value, as a set does.
    const res = JSON.parse(await text(await patchValues(s, ds, [addOp(q, [{ string: 'visible' }])]), 200));
    assert.deepEqual(res.structuredProperties.value.properties, [{ propertyUrn: q, values: [{ string: 'visible' }] }]);
    await text(await patchValues(s, ds, [removeOp(q)]), 200);

    await text(await writeStatus(p, false), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ double: 60.0 }] }]);
  });
});

describe('hard delete', () => {
  test('answers 200 with an empty body; the definition is gone at once', async () => {
    const p = await createProperty(s, 'test.life.hardGone');
    const res = await hardDelete(p);
    assert.equal(await text(res, 200), '');
    for (const path of [`/openapi/v3/entity/structuredProperty/${enc(p)}/propertyDefinition`, `/openapi/v2/entity/structuredProperty/${enc(p)}`]) {
      const gone = await s.request(path);
      assert.equal(gone.status, 404);
      assert.equal(gone.headers.get('not-found-reason'), 'ENTITY');
      assert.equal(await gone.text(), '');
    }
  });

  test('hides the values at once; its task removes them from every entity and keeps other properties', async () => {
    const p = await createProperty(s, 'test.life.hardValues', { entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'] });
    const q = await createProperty(s, 'test.life.hardValuesOther');
    const ds1 = await createDataset(s, 'hard_values_1');
    const ds2 = await createDataset(s, 'hard_values_2');
    const flow = await createEntity(s, 'dataFlow', 'urn:li:dataFlow:(airflow,hard_values,prod)');
    await text(await setValues(s, ds1, [{ propertyUrn: p, values: [{ string: 'p1' }] }, { propertyUrn: q, values: [{ string: 'q1' }] }]), 200);
    await text(await setValues(s, ds2, [{ propertyUrn: p, values: [{ string: 'p2' }] }]), 200);
    await text(await setValues(s, flow, [{ propertyUrn: p, values: [{ string: 'pf' }] }], 'v3', 'dataFlow'), 200);

    await text(await hardDelete(p), 200);
    assert.deepEqual(await readValues(s, ds1), [{ propertyUrn: q, values: [{ string: 'q1' }] }]);
    assert.deepEqual(await readValues(s, ds2), []);
    assert.deepEqual(await readValues(s, flow, 'dataFlow'), []);

    const task = await waitForTask(s, p, HARD_DELETE_TASK);
    assert.deepEqual(summary(task), {
      kind: HARD_DELETE_TASK,
      subject: p,
      state: 'SUCCEEDED',
      total: 3,
      done: 3,
      error: null,
    });
    assert.deepEqual(await storedValues(ds1), [{ propertyUrn: q, values: [{ string: 'q1' }] }]);
    assert.deepEqual(await storedValues(ds2), []);
    assert.deepEqual(await storedValues(flow), []);
    assert.equal(await valueRowCount(p), 0);
    assert.equal(await valueRowCount(q), 1);
  });

  test('refuses re-creating a hard-deleted property with 409 while its cleanup task is open', async () => {
    const qn = 'test.life.hardRecreate';
    const p = await createProperty(s, qn);
    const ds = await createDataset(s, 'hard_recreate');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'old' }] }]), 200);

    // Hold the dataset's entity lock so the cleanup cannot finish until this test lets it.
    const blocker = new pg.Client({ connectionString: s.databaseUrl });
    await blocker.connect();
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await blocker.query('COMMIT');
      await blocker.end();
    };
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [ds]);
      await text(await hardDelete(p), 200);
      const open = (await tasksOf(s, p)).find((t) => t.kind === HARD_DELETE_TASK);
      assert.ok(open && (open.state === 'PENDING' || open.state === 'RUNNING'), JSON.stringify(open));

      await expectRejected(s, () => writeDefinition(s, p, definitionOf(qn)), 409, (raw) => {
        const body = JSON.parse(raw) as { error: string; message: string; reason: string };
        assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'reason'], raw);
        assert.equal(body.reason, 'CleanupPending');
        assert.ok(body.message.includes(`Structured property ${p} was hard deleted and its values are still being removed`), body.message);
        assert.ok(body.message.includes(`task ${open.id}`), body.message);
      });
      await expectMissing(s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}`));
    } finally {
      await release();
    }

    await waitForTask(s, p, HARD_DELETE_TASK);
    await text(await writeDefinition(s, p, definitionOf(qn, { valueType: 'urn:li:dataType:svc.number' })), 200);
    assert.deepEqual(await readValues(s, ds), [], 'values from before the hard delete do not come back');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ double: 7 }] }]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ double: 7 }] }]);
    // Nor in reads of older versions of the aspect: the one holding 'old', and the one the cleanup wrote.
    const history: unknown[] = [];
    for (let version = 1; ; version++) {
      const res = await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/structuredProperties?version=${version}`);
      if (res.status === 404) break;
      history.push(JSON.parse(await text(res, 200)).structuredProperties.value.properties);
    }
    assert.deepEqual(history, [[], []]);
  });

  test('rejects a value of a hard-deleted property with 412', async () => {
    const p = await createProperty(s, 'test.life.hardNoValue');
    const ds = await createDataset(s, 'hard_no_value');
    await text(await hardDelete(p), 200);
    await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'x' }] }]),
      412,
      `Unexpected null value found for ${p} Structured Property Definition.`,
    );
    await waitForTask(s, p, HARD_DELETE_TASK);
  });

  test('hard-deletes a soft-deleted property and removes its values', async () => {
    const p = await createProperty(s, 'test.life.hardAfterSoft');
    const ds = await createDataset(s, 'hard_after_soft');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'x' }] }]), 200);
    await text(await writeStatus(p, true), 200);
    assert.equal(await text(await hardDelete(p), 200), '');
    await expectMissing(s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}`));
    const task = await waitForTask(s, p, HARD_DELETE_TASK);
    assert.equal(task.done, 1);
    assert.deepEqual(await storedValues(ds), []);
  });

  test('deleting the propertyDefinition aspect is a hard delete with the same cleanup', async () => {
    const p = await createProperty(s, 'test.life.hardByAspect');
    const ds = await createDataset(s, 'hard_by_aspect');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'x' }] }]), 200);
    assert.equal(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}/propertyDefinition`, { method: 'DELETE' }), 200), '');
    await expectMissing(s.request(`/openapi/v3/entity/structuredProperty/${enc(p)}/propertyDefinition`));
    assert.deepEqual(await readValues(s, ds), []);
    const task = await waitForTask(s, p, HARD_DELETE_TASK);
    assert.equal(task.done, 1);
    assert.deepEqual(await storedValues(ds), []);
  });

  test('hard delete of a property that does not exist answers 200 and queues no task', async () => {
    const p = propertyUrn('test.life.hardNeverExisted');
    assert.equal(await text(await hardDelete(p), 200), '');
    assert.deepEqual(await tasksOf(s, p), []);
  });
});

describe('versioned breaking change', () => {
  test('an update without a version keeps the version and every value, and queues no cleanup', async () => {
    const qn = 'test.life.keepsValues';
    const p = await createProperty(s, qn, { version: '20240101000000' });
    const ds = await createDataset(s, 'keeps_values');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'kept' }] }]), 200);
    const stored = JSON.parse(await text(await writeDefinition(s, p, definitionOf(qn, { description: 'no version given' })), 200));
    assert.equal(stored.propertyDefinition.value.version, '20240101000000');
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'kept' }] }]);
    assert.deepEqual(await tasksOf(s, p), []);
  });

  test('values written before a lower-then-higher version dance cannot survive a breaking change: a lower version is not stored', async () => {
    const qn = 'test.life.noDance';
    const p = await createProperty(s, qn, { version: '20250101000000' });
    const ds = await createDataset(s, 'no_dance');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'old-string' }] }]), 200);
    const lowered = JSON.parse(await text(await writeDefinition(s, p, definitionOf(qn, { displayName: 'lower', version: '20240101000000' })), 200));
    assert.equal(lowered.propertyDefinition.value.version, '20250101000000', 'a non-breaking change with a lower version keeps the current one');
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'old-string' }] }]);
    assert.deepEqual(await tasksOf(s, p), []);
    await expectValidationError(s, () => writeDefinition(s, p, definitionOf(qn, { valueType: 'urn:li:dataType:svc.number', version: '20241201000000' })), 400, 'Value type cannot be changed');
    await text(await writeDefinition(s, p, definitionOf(qn, { valueType: 'urn:li:dataType:svc.number', version: '20260101000000' })), 200);
    assert.deepEqual(await readValues(s, ds), [], 'the string value written under the older version is not returned under the number type');
  });

  test('a value set again under the new version, equal to an old one, is kept, also after the cleanup', async () => {
    const qn = 'test.life.resetSame';
    const p = await createProperty(s, qn, { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'reset_same');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }] }]), 200);
    await text(await writeDefinition(s, p, definitionOf(qn, { cardinality: 'SINGLE', version: '20240614080000' })), 200);
    assert.deepEqual(await readValues(s, ds), []);
    const again = JSON.parse(await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }] }]), 200));
    assert.deepEqual(again.structuredProperties.value.properties, [{ propertyUrn: p, values: [{ string: 'a' }] }]);
    await waitForTask(s, p, STALE_VALUES_TASK);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'a' }] }]);
    assert.deepEqual(await storedValues(ds), [{ propertyUrn: p, values: [{ string: 'a' }] }]);
  });

  test('rejects MULTIPLE to SINGLE without a version and keeps the values', async () => {
    const qn = 'test.life.noVersion';
    const p = await createProperty(s, qn, { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'no_version');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }, { string: 'b' }] }]), 200);
    await expectValidationError(s, () => writeDefinition(s, p, definitionOf(qn, { cardinality: 'SINGLE' })), 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'a' }, { string: 'b' }] }]);
    assert.deepEqual(await tasksOf(s, p), []);
  });

  test('hides values written under the old version at once; its stale-values task deletes them', async () => {
    const qn = 'test.life.versioned';
    const p = await createProperty(s, qn, { cardinality: 'MULTIPLE', valueType: 'urn:li:dataType:svc.number' });
    const q = await createProperty(s, 'test.life.versionedOther');
    const ds1 = await createDataset(s, 'versioned_1');
    const ds2 = await createDataset(s, 'versioned_2');
    await text(await setValues(s, ds1, [{ propertyUrn: p, values: [{ double: 30 }, { double: 60 }] }, { propertyUrn: q, values: [{ string: 'q' }] }]), 200);
    await text(await setValues(s, ds2, [{ propertyUrn: p, values: [{ double: 30 }] }]), 200);

    const res = JSON.parse(
      await text(await writeDefinition(s, p, definitionOf(qn, { cardinality: 'SINGLE', valueType: 'urn:li:dataType:svc.number', version: '20240614080000' })), 200),
    );
    assert.equal(res.propertyDefinition.value.version, '20240614080000');
    assert.deepEqual(await readValues(s, ds1), [{ propertyUrn: q, values: [{ string: 'q' }] }]);
    assert.deepEqual(await readValues(s, ds2), []);

    const task = await waitForTask(s, p, STALE_VALUES_TASK);
    assert.deepEqual(summary(task), {
      kind: STALE_VALUES_TASK,
      subject: p,
      state: 'SUCCEEDED',
      total: 2,
      done: 2,
      error: null,
    });
    assert.deepEqual(await storedValues(ds1), [{ propertyUrn: q, values: [{ string: 'q' }] }]);
    assert.deepEqual(await storedValues(ds2), []);
    assert.equal(await valueRowCount(p), 0);

    // Under the new version the property is SINGLE and takes values again.
    await expectValidationError(s, () => setValues(s, ds2, [{ propertyUrn: p, values: [{ double: 30 }, { double: 60 }] }]), 400, `Property: ${p} has cardinality 1`);
    await text(await setValues(s, ds2, [{ propertyUrn: p, values: [{ double: 60 }] }]), 200);
    assert.deepEqual(await readValues(s, ds2), [{ propertyUrn: p, values: [{ double: 60 }] }]);
  });

  test('reads of an older version of the aspect hide the values written under an older definition version', async () => {
    const qn = 'test.life.versionedHistory';
    const p = await createProperty(s, qn, { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'versioned_history');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'foo' }, { string: 'bar' }] }]), 200);
    await text(await writeDefinition(s, p, definitionOf(qn, { cardinality: 'SINGLE', version: '20240614080000' })), 200);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'new' }] }]), 200);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'newer' }] }]), 200);

    const history: unknown[] = [];
    for (let version = 1; ; version++) {
      const res = await s.request(`/openapi/v3/entity/dataset/${enc(ds)}/structuredProperties?version=${version}`);
      if (res.status === 404) break;
      history.push(JSON.parse(await text(res, 200)).structuredProperties.value.properties);
    }
    assert.deepEqual(history[0], [], 'the first version holds only values written under the old definition');
    assert.deepEqual(history.at(-1), [{ propertyUrn: p, values: [{ string: 'new' }] }], 'a value written under the current version is still shown');
    assert.ok(!JSON.stringify(history).includes('foo'), JSON.stringify(history));
    const v2 = JSON.parse(await text(await s.request(`/openapi/v2/entity/dataset/${enc(ds)}/structuredProperties?version=1`), 200));
    assert.deepEqual(v2.value.properties, []);
  });

  test('a new version hides older values even when the change is not breaking', async () => {
    const qn = 'test.life.versionNonBreaking';
    const p = await createProperty(s, qn);
    const ds = await createDataset(s, 'version_non_breaking');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'v0' }] }]), 200);
    await text(await writeDefinition(s, p, definitionOf(qn, { displayName: 'same shape', version: '20240614080000' })), 200);
    assert.deepEqual(await readValues(s, ds), []);
    await waitForTask(s, p, STALE_VALUES_TASK);
    assert.deepEqual(await storedValues(ds), []);
  });

  test('values written after the version change survive its stale-values task', async () => {
    const qn = 'test.life.versionedAfter';
    const p = await createProperty(s, qn, { cardinality: 'MULTIPLE' });
    const oldDs = await createDataset(s, 'versioned_after_old');
    const newDs = await createDataset(s, 'versioned_after_new');
    await text(await setValues(s, oldDs, [{ propertyUrn: p, values: [{ string: 'old' }] }]), 200);
    await text(await writeDefinition(s, p, definitionOf(qn, { cardinality: 'SINGLE', version: '20250101000000' })), 200);
    await text(await setValues(s, newDs, [{ propertyUrn: p, values: [{ string: 'new' }] }]), 200);
    await waitForTask(s, p, STALE_VALUES_TASK);
    assert.deepEqual(await readValues(s, newDs), [{ propertyUrn: p, values: [{ string: 'new' }] }]);
    assert.deepEqual(await storedValues(newDs), [{ propertyUrn: p, values: [{ string: 'new' }] }]);
    assert.deepEqual(await readValues(s, oldDs), []);
    assert.deepEqual(await storedValues(oldDs), []);
  });
});
