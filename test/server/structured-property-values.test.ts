/**
 * Structured property values on entities through HTTP: every rule and message of datahub-behaviour.md
 * §2.3 and §2.4, plus svc's (DECISIONS.md): a value only on an entity whose type is in entityTypes, a
 * PATCH result validated like a set, property and entity must exist (412), every violation of one
 * request in one 400 message. A rejected request changes nothing: each compares a fingerprint of the
 * whole database before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM } from '../../server/src/auth/authorize.ts';
import { SvcError } from '../../server/src/shared/errors.ts';
import { expectValidationError } from '../support/expectRejected.ts';
import { fingerprint } from '../support/fingerprint.ts';
import { addOp, createDataset, createEntity, createProperty, datasetUrn, patchValues, propertyUrn, readValues, removeOp, setValues } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer, expectMissing } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

describe('setting values', () => {
  test('a set replaces every structured property of the entity', async () => {
    const a = await createProperty(s, 'test.val.replaceA');
    const b = await createProperty(s, 'test.val.replaceB');
    const ds = await createDataset(s, 'val_replace');
    await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'one' }] }]), 200);
    const res = JSON.parse(await text(await setValues(s, ds, [{ propertyUrn: b, values: [{ string: 'two' }] }]), 200));
    assert.deepEqual(res, { urn: ds, structuredProperties: { value: { properties: [{ propertyUrn: b, values: [{ string: 'two' }] }] } } });
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: b, values: [{ string: 'two' }] }]);
  });

  test('a set with no properties clears them', async () => {
    const a = await createProperty(s, 'test.val.clear');
    const ds = await createDataset(s, 'val_clear');
    await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'x' }] }]), 200);
    await text(await setValues(s, ds, []), 200);
    assert.deepEqual(await readValues(s, ds), []);
  });

  test('rejects two entries for the same property', async () => {
    const p = await createProperty(s, 'test.val.duplicate', { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'val_duplicate');
    await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }] }, { propertyUrn: p, values: [{ string: 'b' }] }]),
      400,
      `Property: ${p} has multiple entries: [`,
    );
  });

  test('rejects a propertyUrn that is not a structuredProperty urn', async () => {
    const ds = await createDataset(s, 'val_wrong_urn_type');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: datasetUrn('some_other'), values: [{ string: 'a' }] }]), 400, 'Unexpected entity type. Expected: structuredProperty Found: dataset');
  });

  test('rejects a value of a property that does not exist with 412', async () => {
    const ds = await createDataset(s, 'val_missing_property');
    const missing = propertyUrn('test.val.neverCreated');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: missing, values: [{ string: 'a' }] }]), 412, `Unexpected null value found for ${missing} Structured Property Definition.`);
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: missing, values: [{ string: 'a' }] }], 'v2'), 412, `Unexpected null value found for ${missing} Structured Property Definition.`);
  });

  test('rejects values on an entity that does not exist with 412, on v3 and v2', async () => {
    const p = await createProperty(s, 'test.val.entityMissing');
    const ds = datasetUrn('val_never_created');
    for (const v of ['v3', 'v2'] as const) {
      await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }] }], v), 412, ds);
    }
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(ds)}`));
  });

  test('a missing property beside an invalid value is a 400 naming both', async () => {
    const p = await createProperty(s, 'test.val.mixedFailures');
    const ds = await createDataset(s, 'val_mixed_failures');
    const missing = propertyUrn('test.val.mixedMissing');
    await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: missing, values: [{ string: 'a' }] }, { propertyUrn: p, values: [{ double: 1 }] }]),
      400,
      `Unexpected null value found for ${missing} Structured Property Definition.`,
      `Property: ${p}, value: {double=1.0} should be a string`,
    );
  });

  test('rejects more than one value for a SINGLE property', async () => {
    const p = await createProperty(s, 'test.val.single');
    const ds = await createDataset(s, 'val_single');
    await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }, { string: 'b' }] }]),
      400,
      `Property: ${p} has cardinality 1, but multiple values were assigned: [{string=a}, {string=b}]`,
    );
  });

  test('accepts several values for a MULTIPLE property, in order', async () => {
    const p = await createProperty(s, 'test.val.multiple', { cardinality: 'MULTIPLE', valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'val_multiple');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ double: 3 }, { double: 1.5 }, { double: 2 }] }]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ double: 3 }, { double: 1.5 }, { double: 2 }] }]);
  });

  test('rejects an assignment with no values', async () => {
    const p = await createProperty(s, 'test.val.noValues', { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'val_no_values');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [] }]), 400, `Property: ${p} has no values`);
  });

  test('rejects a value on an entity whose type is not in entityTypes', async () => {
    const p = await createProperty(s, 'test.val.entityTypeOnlyFlow', { entityTypes: ['urn:li:entityType:svc.dataFlow'] });
    const ds = await createDataset(s, 'val_wrong_entity_type');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'a' }] }]), 400, `Property: ${p} cannot be applied to entity type urn:li:entityType:svc.dataset`);
    const chart = await createEntity(s, 'chart', 'urn:li:chart:(looker,val_wrong_entity_type)');
    await expectValidationError(
      s,
      () => setValues(s, chart, [{ propertyUrn: p, values: [{ string: 'a' }] }], 'v3', 'chart'),
      400,
      `Property: ${p} cannot be applied to entity type urn:li:entityType:svc.chart`,
    );
  });

  test('accepts a value on every entity type in entityTypes', async () => {
    const p = await createProperty(s, 'test.val.entityTypeBoth', { entityTypes: ['dataset', 'dataFlow'] });
    const ds = await createDataset(s, 'val_both_types');
    const flow = await createEntity(s, 'dataFlow', 'urn:li:dataFlow:(airflow,val_both_types,prod)');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'on a dataset' }] }]), 200);
    await text(await setValues(s, flow, [{ propertyUrn: p, values: [{ string: 'on a flow' }] }], 'v3', 'dataFlow'), 200);
    assert.deepEqual(await readValues(s, flow, 'dataFlow'), [{ propertyUrn: p, values: [{ string: 'on a flow' }] }]);
  });

  test('reports every violation of one request in one 400 message joined by "; "', async () => {
    const single = await createProperty(s, 'test.val.manySingle', { allowedValues: [{ value: { string: 'ok' } }] });
    const num = await createProperty(s, 'test.val.manyNumber', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'val_many_violations');
    const message = await expectValidationError(
      s,
      () =>
        setValues(s, ds, [
          { propertyUrn: single, values: [{ string: 'ok' }, { string: 'bad' }] },
          { propertyUrn: num, values: [{ string: 'NaN-ish' }] },
        ]),
      400,
    );
    const parts = message.split('; ');
    assert.ok(parts.some((p) => p.startsWith(`Property: ${single} has cardinality 1, but multiple values were assigned`)), message);
    assert.ok(parts.some((p) => p.startsWith(`Property: ${single}, value: {string=bad} should be one of [`)), message);
    assert.ok(parts.includes(`Property: ${num}, value: {string=NaN-ish} should be a number`), message);
  });
});

describe('value types', () => {
  test('rejects a number for a string property', async () => {
    const p = await createProperty(s, 'test.type.string');
    const ds = await createDataset(s, 'type_string');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ double: 60 }] }]), 400, `Property: ${p}, value: {double=60.0} should be a string`);
  });

  test('rejects a number for a rich_text property', async () => {
    const p = await createProperty(s, 'test.type.richText', { valueType: 'urn:li:dataType:svc.rich_text' });
    const ds = await createDataset(s, 'type_rich_text');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ double: 1.25 }] }]), 400, `Property: ${p}, value: {double=1.25} should be a string`);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: '**bold**' }] }]), 200);
  });

  test('rejects a string that is not a number for a number property', async () => {
    const p = await createProperty(s, 'test.type.number', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'type_number');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'sixty' }] }]), 400, `Property: ${p}, value: {string=sixty} should be a number`);
  });

  test('accepts a number given as a numeric string', async () => {
    const p = await createProperty(s, 'test.type.numericString', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'type_numeric_string');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: '30' }] }]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: '30' }] }]);
  });

  test('accepts a date as YYYY-MM-DD', async () => {
    const p = await createProperty(s, 'test.type.dateOk', { valueType: 'urn:li:dataType:svc.date' });
    const ds = await createDataset(s, 'type_date_ok');
    for (const date of ['2024-06-14', '2024-02-29', '1000-01-01', '9999-12-31']) {
      await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: date }] }]), 200);
    }
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: '9999-12-31' }] }]);
  });

  test('rejects a date not in the form YYYY-MM-DD', async () => {
    const p = await createProperty(s, 'test.type.dateBad', { valueType: 'urn:li:dataType:svc.date' });
    const ds = await createDataset(s, 'type_date_bad');
    for (const bad of ['2020/10/01', '14-06-2024', '2024-02-30', '2024-13-01', '2024-6-14', '0999-01-01', 'yesterday', '2024-06-14T00:00']) {
      await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: bad }] }]), 400, `Property: ${p}, value: {string=${bad}} should be a date with format YYYY-MM-DD`);
    }
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ double: 20240614 }] }]), 400, `Property: ${p}, value: {double=20240614.0} should be a string`);
  });

  test('rejects a value that is not a urn for a urn property', async () => {
    const p = await createProperty(s, 'test.type.urn', { valueType: 'urn:li:dataType:svc.urn' });
    const ds = await createDataset(s, 'type_urn');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'not a urn' }] }]), 400, `Property: ${p}, value: {string=not a urn} should be an urn`);
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ double: 7 }] }]), 400, `Property: ${p}, value: {double=7.0} should be a string`);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: datasetUrn('any') }] }]), 200);
  });

  test('rejects a urn of a type outside typeQualifier.allowedTypes', async () => {
    const p = await createProperty(s, 'test.type.urnAllowedTypes', { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:entityType:svc.corpuser'] } });
    const ds = await createDataset(s, 'type_urn_allowed');
    await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: datasetUrn('other') }] }]),
      400,
      `Property: ${p}, value: {string=${datasetUrn('other')}} is not of any supported urn types:[urn:li:entityType:svc.corpuser]`,
    );
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'urn:li:corpuser:jdoe' }] }]), 200);
  });
  test('rejects a value of a data type svc cannot validate yet', async () => {
    // A dataType entity written by a user exists, so a definition may name it; its values cannot be checked.
    const custom = 'urn:li:dataType:svc.test_custom';
    await text(await s.request(`/openapi/v3/entity/dataType/${enc(custom)}/dataTypeInfo?createIfNotExists=false`, { method: 'POST', body: '{"value":{"qualifiedName":"svc.test_custom"}}' }), 200);
    const p = await createProperty(s, 'test.type.custom', { valueType: custom });
    const ds = await createDataset(s, 'type_custom');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'x' }] }]), 400, `Validation support for type ${custom} is not yet implemented.`);
  });
});

describe('allowed values', () => {
  test('rejects a value outside allowedValues', async () => {
    const p = await createProperty(s, 'test.allowed.strings', { allowedValues: [{ value: { string: 'foo' } }, { value: { string: 'bar' } }] });
    const ds = await createDataset(s, 'allowed_strings');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'baz' }] }]), 400, `Property: ${p}, value: {string=baz} should be one of [`);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'bar' }] }]), 200);
  });

  test('compares by type: {"string":"30"} is not the allowed {"double":30}', async () => {
    const p = await createProperty(s, 'test.allowed.byType', { valueType: 'urn:li:dataType:svc.number', allowedValues: [{ value: { double: 30 } }, { value: { double: 60 } }] });
    const ds = await createDataset(s, 'allowed_by_type');
    const message = await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: '30' }] }]), 400, `Property: ${p}, value: {string=30} should be one of [`);
    assert.ok(message.includes('{double=30.0}') && message.includes('{double=60.0}'), message);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ double: 30 }] }]), 200);
  });

  test('checks every value of a MULTIPLE property', async () => {
    const p = await createProperty(s, 'test.allowed.multiple', { valueType: 'urn:li:dataType:svc.number', cardinality: 'MULTIPLE', allowedValues: [{ value: { double: 1 } }] });
    const ds = await createDataset(s, 'allowed_multiple');
    const message = await expectValidationError(
      s,
      () => setValues(s, ds, [{ propertyUrn: p, values: [{ double: 1 }, { double: 2 }, { double: 3 }] }]),
      400,
      `Property: ${p}, value: {double=2.0} should be one of [`,
      `Property: ${p}, value: {double=3.0} should be one of [`,
    );
    assert.ok(!message.includes('value: {double=1.0} should be'), message);
  });
});

describe('immutable properties', () => {
  async function immutableOnDataset(label: string): Promise<{ p: string; ds: string }> {
    const p = await createProperty(s, `test.immutable.${label}`, { immutable: true });
    const ds = await createDataset(s, `immutable_${label}`);
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'first' }] }]), 200);
    return { p, ds };
  }

  test('accepts writing the same value again', async () => {
    const { p, ds } = await immutableOnDataset('same');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'first' }] }]), 200);
    await text(await patchValues(s, ds, [addOp(p, [{ string: 'first' }])]), 200);
  });

  test('rejects changing the value of an immutable property', async () => {
    const { p, ds } = await immutableOnDataset('mutate');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'second' }] }]), 400, `Cannot mutate an immutable property: ${p}`);
    await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'second' }])]), 400, `Cannot mutate an immutable property: ${p}`);
  });

  test('rejects removing an immutable property by a set or a patch', async () => {
    const { p, ds } = await immutableOnDataset('delete');
    const other = await createProperty(s, 'test.immutable.deleteOther');
    await expectValidationError(s, () => setValues(s, ds, [{ propertyUrn: other, values: [{ string: 'x' }] }]), 400, `Cannot delete an immutable property ${p}`);
    await expectValidationError(s, () => patchValues(s, ds, [removeOp(p)]), 400, `Cannot delete an immutable property ${p}`);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'first' }] }]);
  });
  test('rejects deleting the structuredProperties aspect that holds an immutable property', async () => {
    // §2.4: the immutable check also applies to change type DELETE.
    const { p, ds } = await immutableOnDataset('aspectDelete');
    await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset/${enc(ds)}/structuredProperties`, { method: 'DELETE' }), 400, `Cannot delete an immutable property ${p}`);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'first' }] }]);
  });
});

describe('patching values', () => {
  test('add appends or replaces one property and keeps the others; remove drops one', async () => {
    const a = await createProperty(s, 'test.patch.keepA');
    const b = await createProperty(s, 'test.patch.keepB', { cardinality: 'MULTIPLE' });
    const ds = await createDataset(s, 'patch_keep');
    await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'a1' }] }]), 200);
    await text(await patchValues(s, ds, [addOp(b, [{ string: 'b1' }])]), 200);
    const replaced = JSON.parse(await text(await patchValues(s, ds, [addOp(b, [{ string: 'b1' }, { string: 'b2' }])]), 200));
    assert.deepEqual(replaced, {
      urn: ds,
      structuredProperties: { value: { properties: [{ propertyUrn: a, values: [{ string: 'a1' }] }, { propertyUrn: b, values: [{ string: 'b1' }, { string: 'b2' }] }] } },
    });
    const removed = JSON.parse(await text(await patchValues(s, ds, [removeOp(a)], 'v2'), 200));
    assert.deepEqual(removed, { urn: ds, aspects: { structuredProperties: { value: { properties: [{ propertyUrn: b, values: [{ string: 'b1' }, { string: 'b2' }] }] } } } });
  });

  test('rejects a patch whose result has a value outside allowedValues', async () => {
    const p = await createProperty(s, 'test.patch.allowed', { allowedValues: [{ value: { string: 'foo2' } }, { value: { string: 'bar2' } }] });
    const ds = await createDataset(s, 'patch_allowed');
    for (const v of ['v3', 'v2'] as const) {
      await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'baz' }])], v), 400, `Property: ${p}, value: {string=baz} should be one of [`);
    }
  });

  test('rejects a patch whose result breaks the cardinality', async () => {
    const p = await createProperty(s, 'test.patch.single');
    const ds = await createDataset(s, 'patch_single');
    await expectValidationError(
      s,
      () => patchValues(s, ds, [addOp(p, [{ string: 'a' }, { string: 'b' }])]),
      400,
      `Property: ${p} has cardinality 1, but multiple values were assigned: [{string=a}, {string=b}]`,
    );
  });

  test('rejects a patch whose result has a value of the wrong type', async () => {
    const p = await createProperty(s, 'test.patch.type', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'patch_type');
    await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'many' }])]), 400, `Property: ${p}, value: {string=many} should be a number`);
  });

  test('rejects a patch adding a property not meant for the entity type', async () => {
    const p = await createProperty(s, 'test.patch.entityType', { entityTypes: ['urn:li:entityType:svc.dataFlow'] });
    const ds = await createDataset(s, 'patch_entity_type');
    await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'a' }])]), 400, `Property: ${p} cannot be applied to entity type urn:li:entityType:svc.dataset`);
  });

  test('rejects a patch adding a property that is not a structuredProperty urn', async () => {
    const ds = await createDataset(s, 'patch_wrong_urn_type');
    await expectValidationError(s, () => patchValues(s, ds, [addOp('urn:li:tag:nope', [{ string: 'a' }])]), 400, 'Unexpected entity type. Expected: structuredProperty Found: tag');
  });

  test('rejects a patch adding a property that does not exist with 412', async () => {
    const ds = await createDataset(s, 'patch_missing_property');
    const missing = propertyUrn('test.patch.neverCreated');
    await expectValidationError(s, () => patchValues(s, ds, [addOp(missing, [{ string: 'a' }])]), 412, `Unexpected null value found for ${missing} Structured Property Definition.`);
  });

  test('rejects a patch of an entity that does not exist with 412', async () => {
    const p = await createProperty(s, 'test.patch.entityMissing');
    const ds = datasetUrn('patch_never_created');
    await expectValidationError(s, () => patchValues(s, ds, [addOp(p, [{ string: 'a' }])]), 412, ds);
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(ds)}`));
  });

  test('a patch that fails in its second operation applies none of them', async () => {
    const good = await createProperty(s, 'test.patch.atomicGood');
    const bad = await createProperty(s, 'test.patch.atomicBad', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'patch_atomic');
    await expectValidationError(s, () => patchValues(s, ds, [addOp(good, [{ string: 'fine' }]), addOp(bad, [{ string: 'x' }])]), 400, `Property: ${bad}, value: {string=x} should be a number`);
  });

  test('reports every violation of a patch in one 400 message joined by "; "', async () => {
    const a = await createProperty(s, 'test.patch.manyA', { allowedValues: [{ value: { string: 'only' } }] });
    const b = await createProperty(s, 'test.patch.manyB', { valueType: 'urn:li:dataType:svc.date' });
    const ds = await createDataset(s, 'patch_many');
    const message = await expectValidationError(s, () => patchValues(s, ds, [addOp(a, [{ string: 'other' }]), addOp(b, [{ string: 'soon' }])]), 400);
    const parts = message.split('; ');
    assert.ok(parts.some((p) => p.startsWith(`Property: ${a}, value: {string=other} should be one of [`)), message);
    assert.ok(parts.includes(`Property: ${b}, value: {string=soon} should be a date with format YYYY-MM-DD`), message);
  });
});

describe('upserting and removing named properties (the core GraphQL and any other surface call)', () => {
  /** Runs `op`, which must be refused with VALIDATION, and asserts the database did not change; returns the message. */
  async function refused(op: () => Promise<unknown>): Promise<string> {
    const before = await fingerprint(s.databaseUrl);
    const err = await op().then(
      () => assert.fail('accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SvcError && err.code === 'VALIDATION', String(err));
    assert.equal(await fingerprint(s.databaseUrl), before, 'the database changed');
    return err.message;
  }

  test('an upsert naming a property twice is refused with the message of a set naming it twice', async () => {
    const p = await createProperty(s, 'test.core.upsertTwice');
    const ds = await createDataset(s, 'core_upsert_twice');
    const twice = [
      { propertyUrn: p, values: [{ string: 'a' }] },
      { propertyUrn: p, values: [{ string: 'b' }] },
    ];
    const set = await expectValidationError(s, () => setValues(s, ds, twice), 400, `Property: ${p} has multiple entries: [`);
    assert.equal(await refused(() => s.svc.catalog.properties.upsertValues(SYSTEM, ds, twice)), set);
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(ds)}/structuredProperties`));
  });

  test('a remove naming something other than a structured property is refused with the messages of an upsert; properties not held stay ignored', async () => {
    const p = await createProperty(s, 'test.core.removeKinds');
    const ds = await createDataset(s, 'core_remove_kinds');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'kept' }] }]), 200);
    const properties = s.svc.catalog.properties;
    for (const bad of ['garbage', 'urn:li:tag:x']) {
      const upsert = await refused(() => properties.upsertValues(SYSTEM, ds, [{ propertyUrn: bad, values: [{ string: 'a' }] }]));
      assert.equal(await refused(() => properties.removeValues(SYSTEM, ds, [p, bad])), upsert);
    }
    assert.equal(await refused(() => properties.removeValues(SYSTEM, ds, ['urn:li:tag:x'])), 'Unexpected entity type. Expected: structuredProperty Found: tag');
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: p, values: [{ string: 'kept' }] }]);
    const written = await properties.removeValues(SYSTEM, ds, [propertyUrn('test.core.neverSet'), p]);
    assert.deepEqual((written.stored.value as { properties: unknown[] }).properties, []);
  });
});
