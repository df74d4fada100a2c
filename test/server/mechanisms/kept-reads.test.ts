/**
 * A structured-property write that follows an earlier one of the same entity on the same server is
 * prepared from what that write left, without reading (entities/keptReads.ts). What was kept is never
 * trusted: two servers on one database change the entity or the properties behind each other's back,
 * and every write still decides on the state stored when it goes in.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addOp, createDataset, createProperty, datasetUrn, patchValues, readValues, setValues } from '../../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../../support/testServer.ts';

let a: TestServer;
let b: TestServer;
before(async () => {
  a = await startTestServer();
  b = await startTestServer({ DATABASE_URL: a.databaseUrl });
});
after(async () => {
  await b?.close();
  await a?.close();
});

async function metric(s: TestServer, name: string): Promise<number> {
  const metrics = await (await s.request('/metrics', { token: null })).text();
  return Number(metrics.match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? NaN);
}

/** Writes the definition of number property `urn` with allowed values 1 and 2, through server `s`. */
async function allowOneAndTwo(s: TestServer, urn: string, qualifiedName: string): Promise<void> {
  const value = { qualifiedName, valueType: 'urn:li:dataType:datahub.number', entityTypes: ['urn:li:entityType:datahub.dataset'], allowedValues: [{ value: { double: 1 } }, { value: { double: 2 } }] };
  await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
}

const status = (s: TestServer, urn: string, removed: boolean) =>
  s.request(`/openapi/v3/entity/structuredProperty/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { removed } }) });

test('a value given again is written from what the last write left, and the answer is as after a read', async () => {
  const p = await createProperty(a, 'kept.again', { valueType: 'urn:li:dataType:datahub.number' });
  const d = await createDataset(a, 'kept_again');
  const first = JSON.parse(await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200));
  const before = await metric(a, 'svc_write_kept_total');
  const stale = await metric(a, 'svc_write_stale_total');
  const again = JSON.parse(await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200));
  const patched = JSON.parse(await text(await patchValues(a, d, [addOp(p, [{ double: 2 }])]), 200));
  assert.equal(await metric(a, 'svc_write_kept_total'), before + 2);
  // The kept rows were named as the database names them (no write was refused and prepared again).
  assert.equal(await metric(a, 'svc_write_stale_total'), stale);
  assert.deepEqual(again, first);
  assert.deepEqual(patched.structuredProperties.value.properties, [{ propertyUrn: p, values: [{ double: 2 }] }]);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 2 }] }]);
});

test('a patch after another server changed the entity applies to the value stored, not to the one kept', async () => {
  const p = await createProperty(a, 'kept.patch_p', { valueType: 'urn:li:dataType:datahub.number' });
  const q = await createProperty(a, 'kept.patch_q', { valueType: 'urn:li:dataType:datahub.number' });
  const d = await createDataset(a, 'kept_patch');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  // Server b replaces the value: a's kept row is now stale.
  await text(await setValues(b, d, [{ propertyUrn: p, values: [{ double: 5 }] }, { propertyUrn: q, values: [{ double: 6 }] }]), 200);
  const stale = await metric(a, 'svc_write_stale_total');
  await text(await patchValues(a, d, [addOp(p, [{ double: 7 }])]), 200);
  assert.equal(await metric(a, 'svc_write_stale_total'), stale + 1, 'the write from the kept row was refused by its statement');
  assert.deepEqual(await readValues(b, d), [
    { propertyUrn: p, values: [{ double: 7 }] },
    { propertyUrn: q, values: [{ double: 6 }] },
  ]);
});

test('a property soft deleted on another server is refused; restored there, it is accepted again', async () => {
  const p = await createProperty(a, 'kept.soft', { valueType: 'urn:li:dataType:datahub.number' });
  const d = await createDataset(a, 'kept_soft');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  await text(await status(b, p, true), 200);
  // a kept the property's state from before: the write statement finds its status changed.
  const refused = await setValues(a, d, [{ propertyUrn: p, values: [{ double: 2 }] }]);
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /Cannot apply a soft deleted Structured Property value/);
  // a's refusal was decided on a fresh read; b restores the property, and a's next write is decided
  // on the stored state again, not refused on what a saw last.
  await text(await status(b, p, false), 200);
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 3 }] }]), 200);
  assert.deepEqual(await readValues(a, d), [{ propertyUrn: p, values: [{ double: 3 }] }]);
});

test('a refusal on a kept state that has changed since is decided again on the stored state', async () => {
  const p = await createProperty(a, 'kept.allowed', { valueType: 'urn:li:dataType:datahub.number', allowedValues: [{ value: { double: 1 } }] });
  const d = await createDataset(a, 'kept_allowed');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  // b allows 2 (an append, no new version); a kept the definition that did not.
  await allowOneAndTwo(b, p, 'kept.allowed');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 2 }] }]), 200);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 2 }] }]);
});

test('an entity deleted and created again on another server: the set is checked against it as it is now', async () => {
  const p = await createProperty(a, 'kept.deleted', { valueType: 'urn:li:dataType:datahub.number', immutable: true });
  const d = datasetUrn('kept_deleted');
  await createDataset(a, 'kept_deleted');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  await text(await b.request(`/openapi/v3/entity/dataset/${enc(d)}`, { method: 'DELETE' }), 200);
  await createDataset(b, 'kept_deleted');
  // The immutable value a kept is gone with the entity: a new value is a first value, not a change.
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 2 }] }]), 200);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 2 }] }]);
});

test('an entity two servers take turns writing is read for each write once the first kept row was found stale', async () => {
  const p = await createProperty(a, 'kept.turns', { valueType: 'urn:li:dataType:datahub.number' });
  const d = await createDataset(a, 'kept_turns');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 0 }] }]), 200);
  const stale = await metric(a, 'svc_write_stale_total');
  const kept = await metric(a, 'svc_write_kept_total');
  for (let k = 1; k <= 3; k++) {
    await text(await setValues(b, d, [{ propertyUrn: p, values: [{ double: 10 * k }] }]), 200);
    await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 10 * k + 1 }] }]), 200);
  }
  // Each server's first write after the other's was prepared from what it kept and refused by its
  // statement; from then on each reads the entity for every write: one refused statement per server,
  // not one per turn. (Both servers run in this process and share its counters.)
  assert.equal(await metric(a, 'svc_write_stale_total'), stale + 2);
  assert.equal(await metric(a, 'svc_write_kept_total'), kept + 2);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 31 }] }]);
});

test("an entity's first value on a server that knows its properties is written from a guess, without a read, and reads back as written", async () => {
  const p = await createProperty(a, 'guess.first', { valueType: 'urn:li:dataType:datahub.number' });
  const known = await createDataset(a, 'guess_known');
  // The first write naming p reads it: from then on a knows p's state.
  await text(await setValues(a, known, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  const d = await createDataset(a, 'guess_first');
  const guessed = await metric(a, 'svc_write_guessed_total');
  const stale = await metric(a, 'svc_write_stale_total');
  const answer = JSON.parse(await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 2 }] }]), 200));
  assert.equal(await metric(a, 'svc_write_guessed_total'), guessed + 1);
  assert.equal(await metric(a, 'svc_write_stale_total'), stale, 'the guess held: no write was refused and prepared again');
  assert.deepEqual(answer.structuredProperties.value.properties, [{ propertyUrn: p, values: [{ double: 2 }] }]);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 2 }] }]);
});

test('a guess found wrong is decided again on what is stored: a value another server wrote, immutable, is not replaced', async () => {
  const p = await createProperty(a, 'guess.immutable', { valueType: 'urn:li:dataType:datahub.number', immutable: true });
  await text(await setValues(a, await createDataset(a, 'guess_immutable_known'), [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  const d = await createDataset(b, 'guess_immutable');
  await text(await setValues(b, d, [{ propertyUrn: p, values: [{ double: 5 }] }]), 200);
  const stale = await metric(a, 'svc_write_stale_total');
  // a kept nothing of d and guesses it has no value yet; its statement finds b's.
  const refused = await setValues(a, d, [{ propertyUrn: p, values: [{ double: 6 }] }]);
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /immutable/i);
  assert.equal(await metric(a, 'svc_write_stale_total'), stale + 1);
  assert.deepEqual(await readValues(a, d), [{ propertyUrn: p, values: [{ double: 5 }] }]);
});

test('a guess is refused for an entity that does not exist, with the message a read gives', async () => {
  const p = await createProperty(a, 'guess.missing', { valueType: 'urn:li:dataType:datahub.number' });
  await text(await setValues(a, await createDataset(a, 'guess_missing_known'), [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  const missing = datasetUrn('guess_missing_absent');
  const res = await setValues(a, missing, [{ propertyUrn: p, values: [{ double: 2 }] }]);
  assert.equal(res.status, 412);
  assert.match(await res.text(), /does not exist: create it before setting structured properties on it/);
  const read = await b.request(`/openapi/v3/entity/dataset/${enc(missing)}`);
  assert.equal(read.status, 404);
});

test('a property changed on another server since this one last read it: the guess is refused by its statement and the write decided on the property as it is', async () => {
  const p = await createProperty(a, 'guess.changed', { valueType: 'urn:li:dataType:datahub.number', allowedValues: [{ value: { double: 1 } }] });
  await text(await setValues(a, await createDataset(a, 'guess_changed_known'), [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  // b allows 2 (an append, no new version): a remembers the definition without it.
  await allowOneAndTwo(b, p, 'guess.changed');
  const d = await createDataset(a, 'guess_changed');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 2 }] }]), 200);
  assert.deepEqual(await readValues(b, d), [{ propertyUrn: p, values: [{ double: 2 }] }]);
});

test('a patch adding a property the entity does not hold yet starts from the kept row, with the property as last read', async () => {
  const p = await createProperty(a, 'kept.held', { valueType: 'urn:li:dataType:datahub.number' });
  const q = await createProperty(a, 'kept.added', { valueType: 'urn:li:dataType:datahub.number', allowedValues: [{ value: { double: 1 } }] });
  const d = await createDataset(a, 'kept_added');
  await text(await setValues(a, d, [{ propertyUrn: p, values: [{ double: 1 }] }]), 200);
  // Another entity's write reads q: a knows its state from then on.
  await text(await setValues(a, await createDataset(a, 'kept_added_other'), [{ propertyUrn: q, values: [{ double: 1 }] }]), 200);
  const kept = await metric(a, 'svc_write_kept_total');
  const stale = await metric(a, 'svc_write_stale_total');
  await text(await patchValues(a, d, [addOp(q, [{ double: 1 }])]), 200);
  assert.equal(await metric(a, 'svc_write_kept_total'), kept + 1);
  assert.equal(await metric(a, 'svc_write_stale_total'), stale);
  // The rules of q hold as read: a value it does not allow is refused.
  const refused = await patchValues(a, d, [addOp(q, [{ double: 2 }])]);
  assert.equal(refused.status, 400);
  assert.deepEqual(await readValues(b, d), [
    { propertyUrn: p, values: [{ double: 1 }] },
    { propertyUrn: q, values: [{ double: 1 }] },
  ]);
});
