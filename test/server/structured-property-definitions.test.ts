/**
 * Structured property definitions through HTTP: every rule and message of datahub-behaviour.md §2.2
 * (create and update, the version rule) plus svc's stricter rules of DECISIONS.md (valueType and
 * entityTypes must name existing entities, short forms normalised), and the bootstrapped dataType and
 * entityType entities. A rejected request is 400 {"error":"Validation Error","message"} and changes
 * nothing: each rejection compares a fingerprint of the whole database before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../../server/src/registry/registry.ts';
import { expectValidationError } from '../support/expectRejected.ts';
import { createProperty, definitionOf, propertyUrn, writeDefinition, type Definition } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer, expectMissing } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

/** Creates (or updates) a definition that must be accepted; returns the stored definition as echoed. */
async function accepted(urn: string, definition: Definition): Promise<Definition> {
  const body = JSON.parse(await text(await writeDefinition(s, urn, definition), 200));
  assert.equal(body.urn, urn);
  return body.propertyDefinition.value as Definition;
}

async function storedDefinition(urn: string): Promise<Definition> {
  return JSON.parse(await text(await s.request(`/openapi/v2/entity/structuredProperty/${enc(urn)}/propertyDefinition`), 200)).value;
}

const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('creating a definition', () => {
  test('stores the definition and echoes exactly what was sent, on v3 and v2', async () => {
    const urn = propertyUrn('test.defs.created');
    const definition = definitionOf('test.defs.created', {
      displayName: 'Created',
      description: 'A property made by a test',
      cardinality: 'MULTIPLE',
      entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
      allowedValues: [{ value: { string: 'a' }, description: 'the letter a' }, { value: { string: 'b' } }],
    });
    assert.deepEqual(await accepted(urn, definition), definition);
    assert.deepEqual(await storedDefinition(urn), definition);
    const v2 = JSON.parse(await text(await writeDefinition(s, propertyUrn('test.defs.createdV2'), definitionOf('test.defs.createdV2'), 'v2'), 200));
    assert.deepEqual(v2, { urn: propertyUrn('test.defs.createdV2'), aspects: { propertyDefinition: { value: definitionOf('test.defs.createdV2') } } });
  });

  test('normalises the short data type and entity type urns to the svc. form', async () => {
    const urn = propertyUrn('test.defs.shortUrns');
    const stored = await accepted(urn, definitionOf('test.defs.shortUrns', { valueType: 'urn:li:dataType:number', entityTypes: ['urn:li:entityType:dataset', 'urn:li:entityType:dataFlow'] }));
    assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
    assert.deepEqual(stored.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
    const read = await storedDefinition(urn);
    assert.equal(read.valueType, 'urn:li:dataType:svc.number');
    assert.deepEqual(read.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
  });

  test('normalises the bare type names of the command-line file (number, dataset, dataFlow)', async () => {
    const urn = propertyUrn('test.defs.bareNames');
    const stored = await accepted(urn, definitionOf('test.defs.bareNames', { valueType: 'number', entityTypes: ['dataset', 'dataFlow'] }));
    assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
    assert.deepEqual(stored.entityTypes, ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow']);
  });

  test('normalises short forms inside typeQualifier.allowedTypes', async () => {
    const urn = propertyUrn('test.defs.allowedTypesShort');
    const stored = await accepted(urn, definitionOf('test.defs.allowedTypesShort', { valueType: 'urn', typeQualifier: { allowedTypes: ['corpuser', 'urn:li:entityType:corpGroup'] } }));
    assert.equal(stored.valueType, 'urn:li:dataType:svc.urn');
    assert.deepEqual(stored.typeQualifier, { allowedTypes: ['urn:li:entityType:svc.corpuser', 'urn:li:entityType:svc.corpGroup'] });
  });

  test('accepts every bootstrapped data type as valueType', async () => {
    for (const type of ['string', 'number', 'urn', 'rich_text', 'date']) {
      const qn = `test.defs.type_${type}`;
      const stored = await accepted(propertyUrn(qn), definitionOf(qn, { valueType: `urn:li:dataType:svc.${type}` }));
      assert.equal(stored.valueType, `urn:li:dataType:svc.${type}`);
    }
  });

  test('accepts a version of exactly 14 digits', async () => {
    const stored = await accepted(propertyUrn('test.defs.versioned'), definitionOf('test.defs.versioned', { version: '20240614080000' }));
    assert.equal(stored.version, '20240614080000');
  });

  test('rejects a version that is not exactly 14 digits', async () => {
    for (const [i, version] of ['2024061408000', '202406140800000', '2024061408000a', '2024.06.14.08', ''].entries()) {
      const qn = `test.defs.badVersion${i}`;
      await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { version })), 400, 'Invalid version specified. Must match [0-9]{14}');
      assert.equal((await s.request(`/openapi/v3/entity/structuredProperty/${enc(propertyUrn(qn))}`)).status, 404);
    }
  });

  test('rejects an urn id with spaces', async () => {
    const urn = 'urn:li:structuredProperty:test.defs.urn with spaces';
    await expectValidationError(s, () => writeDefinition(s, urn, definitionOf('test.defs.urnWithSpaces')), 400, 'Urn ID cannot have spaces');
  });

  test('rejects a qualified name with spaces', async () => {
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn('test.defs.qnSpaces'), definitionOf('test.defs.qn spaces')),
      400,
      'Qualified names cannot have spaces',
    );
  });

  test('rejects an allowedType that is not an entityType urn', async () => {
    const qn = 'test.defs.allowedTypeNotEntityType';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:dataType:svc.string'] } })),
      400,
      'Provided allowedType that is not an entityType entity. List of allowedTypes: [urn:li:dataType:svc.string]',
    );
  });

  test('rejects an allowedType that does not exist', async () => {
    const qn = 'test.defs.allowedTypeMissing';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:entityType:svc.noSuchEntity'] } })),
      400,
      'Provided allowedType that does not exist. List of allowedTypes: [urn:li:entityType:svc.noSuchEntity]',
    );
  });

  test('rejects an allowedType that does not parse as a urn', async () => {
    const qn = 'test.defs.allowedTypeUnparsable';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:entityType:(svc.dataset'] } })),
      400,
      'Issue resolving allowedTypes inside of typeQualifier. These must be entity type urns. List of allowedTypes: [urn:li:entityType:(svc.dataset]',
    );
  });

  test('rejects a typeQualifier key other than allowedTypes', async () => {
    const qn = 'test.defs.typeQualifierKey';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.urn', typeQualifier: { allowedTypes: ['urn:li:entityType:svc.dataset'], otherTypes: ['x'] } })),
      400,
      'typeQualifier: unknown key "otherTypes"',
    );
  });

  test('rejects a valueType that names no existing dataType entity', async () => {
    // The v3 smoke test's three bad value types (datahub-behaviour.md §2.2, later additions).
    for (const [i, valueType] of ['urn:li:dataType:svc.DOES_NOT_EXIST', 'urn:li:container:svc.string', 'urn:li:dataType:(svc.string', 'text'].entries()) {
      const qn = `test.defs.badValueType${i}`;
      await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType })), 400, `Provided valueType ${valueType} is not an existing dataType entity`);
    }
  });

  test('rejects an entityType that names no existing entityType entity', async () => {
    for (const [i, entityType] of ['urn:li:entityType:svc.noSuchEntity', 'urn:li:dataType:svc.string', 'urn:li:entityType:(svc.dataset', 'noSuchEntity'].entries()) {
      const qn = `test.defs.badEntityType${i}`;
      await expectValidationError(
        s,
        () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { entityTypes: ['urn:li:entityType:svc.dataset', entityType] })),
        400,
        `Provided entityType ${entityType} is not an existing entityType entity`,
      );
    }
  });

  test('rejects a definition without any entity type', async () => {
    const qn = 'test.defs.noEntityTypes';
    await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { entityTypes: [] })), 400, 'entityTypes: must name at least one entity type');
  });

  test('rejects an allowed value that is not of the value type', async () => {
    const qn = 'test.defs.allowedValueWrongType';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.number', allowedValues: [{ value: { string: 'thirty' } }, { value: { double: 60 } }] })),
      400,
      'allowedValues[0], value: {string=thirty} should be a number',
    );
    const qn2 = 'test.defs.allowedValueWrongType2';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn2), definitionOf(qn2, { allowedValues: [{ value: { string: 'ok' } }, { value: { double: 1.5 } }] })),
      400,
      'allowedValues[1], value: {double=1.5} should be a string',
    );
  });

  test('rejects an allowed value listed twice', async () => {
    const qn = 'test.defs.allowedValueTwice';
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { valueType: 'urn:li:dataType:svc.number', allowedValues: [{ value: { double: 30 } }, { value: { double: 30 }, description: 'again' }] })),
      400,
      'allowedValues: {double=30.0} is listed more than once',
    );
  });

  test('rejects a definition missing its required fields, naming each', async () => {
    const message = await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn('test.defs.missingFields'), { displayName: 'incomplete' }),
      400,
      'missing required field "qualifiedName"',
      'missing required field "valueType"',
      'missing required field "entityTypes"',
    );
    assert.match(message, /propertyDefinition/);
  });

  test('rejects an unknown cardinality', async () => {
    const qn = 'test.defs.badCardinality';
    await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { cardinality: 'MANY' })), 400, 'cardinality');
  });

  test('reports every violation of one request in one 400 message joined by "; "', async () => {
    const qn = 'test.defs.manyViolations';
    const message = await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf('test.defs.many violations', { version: 'v1', valueType: 'urn:li:dataType:svc.nope', entityTypes: ['urn:li:entityType:svc.nope'] })),
      400,
    );
    const parts = message.split('; ');
    assert.ok(parts.includes('Invalid version specified. Must match [0-9]{14}'), message);
    assert.ok(parts.includes('Qualified names cannot have spaces'), message);
    assert.ok(parts.some((p) => p.startsWith('Provided valueType urn:li:dataType:svc.nope is not an existing dataType entity')), message);
    assert.ok(parts.some((p) => p.startsWith('Provided entityType urn:li:entityType:svc.nope is not an existing entityType entity')), message);
  });

  test('rejections on v2 have the same status and body', async () => {
    const qn = 'test.defs.v2Rejected';
    await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, { version: '1' }), 'v2'), 400, 'Invalid version specified. Must match [0-9]{14}');
  });
});

describe('updating a definition', () => {
  /** Creates `qn` with `first`, then writes `second` over it. */
  async function update(qn: string, first: Definition, second: Definition): Promise<() => Promise<Response>> {
    await accepted(propertyUrn(qn), definitionOf(qn, first));
    return () => writeDefinition(s, propertyUrn(qn), definitionOf(qn, second));
  }

  test('rejects a changed valueType without a new version', async () => {
    const req = await update('test.upd.valueType', {}, { valueType: 'urn:li:dataType:svc.number' });
    await expectValidationError(s, req, 400, 'Value type cannot be changed as this is a backwards incompatible change');
  });

  test('accepts a changed valueType with a new version', async () => {
    const req = await update('test.upd.valueTypeVersioned', {}, { valueType: 'urn:li:dataType:svc.number', version: '20240614080000' });
    const stored = JSON.parse(await text(await req(), 200)).propertyDefinition.value;
    assert.equal(stored.valueType, 'urn:li:dataType:svc.number');
    assert.equal(stored.version, '20240614080000');
  });

  test('rejects MULTIPLE to SINGLE without a version', async () => {
    const req = await update('test.upd.multiToSingle', { cardinality: 'MULTIPLE' }, { cardinality: 'SINGLE' });
    await expectValidationError(s, req, 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
  });

  test('rejects MULTIPLE to the default cardinality (SINGLE) without a version', async () => {
    const qn = 'test.upd.multiToDefault';
    await accepted(propertyUrn(qn), definitionOf(qn, { cardinality: 'MULTIPLE' }));
    const { cardinality: _omitted, ...withoutCardinality } = definitionOf(qn);
    await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), withoutCardinality), 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
  });

  test('accepts MULTIPLE to SINGLE with a version', async () => {
    const req = await update('test.upd.multiToSingleVersioned', { cardinality: 'MULTIPLE' }, { cardinality: 'SINGLE', version: '20240614080000' });
    assert.equal(JSON.parse(await text(await req(), 200)).propertyDefinition.value.cardinality, 'SINGLE');
  });

  test('accepts SINGLE to MULTIPLE without a version', async () => {
    const req = await update('test.upd.singleToMulti', { cardinality: 'SINGLE' }, { cardinality: 'MULTIPLE' });
    assert.equal(JSON.parse(await text(await req(), 200)).propertyDefinition.value.cardinality, 'MULTIPLE');
  });

  test('rejects a changed qualified name, even with a new version', async () => {
    const qn = 'test.upd.rename';
    await accepted(propertyUrn(qn), definitionOf(qn));
    await expectValidationError(s, () => writeDefinition(s, propertyUrn(qn), definitionOf('test.upd.renamed')), 400, 'Cannot change the fully qualified name of a Structured Property');
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn(qn), definitionOf('test.upd.renamed', { version: '20240614080000' })),
      400,
      'Cannot change the fully qualified name of a Structured Property',
    );
  });

  test('rejects allowed values on a property that had none', async () => {
    const req = await update('test.upd.restrictOpen', {}, { allowedValues: [{ value: { string: 'a' } }] });
    await expectValidationError(s, req, 400, 'Cannot restrict values that were previously allowed');
  });

  test('rejects dropping allowed values, one message per value dropped', async () => {
    const three = [{ value: { string: 'a' } }, { value: { string: 'b' } }, { value: { string: 'c' } }];
    const req = await update('test.upd.restrictDrop', { allowedValues: three }, { allowedValues: [{ value: { string: 'b' } }] });
    const message = await expectValidationError(s, req, 400, 'Cannot restrict values that were previously allowed');
    assert.equal(occurrences(message, 'Cannot restrict values that were previously allowed'), 2, message);
  });

  test('compares allowed values by type: {"string":"30"} does not keep {"double":30}', async () => {
    const req = await update(
      'test.upd.restrictByType',
      { valueType: 'urn:li:dataType:svc.number', allowedValues: [{ value: { double: 30 } }, { value: { double: 60 } }] },
      { valueType: 'urn:li:dataType:svc.number', allowedValues: [{ value: { string: '30' } }, { value: { double: 60 } }] },
    );
    const message = await expectValidationError(s, req, 400, 'Cannot restrict values that were previously allowed');
    assert.equal(occurrences(message, 'Cannot restrict values that were previously allowed'), 1, message);
  });

  test('accepts dropping allowed values with a new version', async () => {
    const req = await update(
      'test.upd.restrictVersioned',
      { allowedValues: [{ value: { string: 'a' } }, { value: { string: 'b' } }] },
      { allowedValues: [{ value: { string: 'b' } }], version: '20240614080000' },
    );
    assert.deepEqual(JSON.parse(await text(await req(), 200)).propertyDefinition.value.allowedValues, [{ value: { string: 'b' } }]);
  });

  test('accepts adding allowed values while keeping the old ones', async () => {
    const req = await update(
      'test.upd.widen',
      { allowedValues: [{ value: { string: 'a' } }] },
      { allowedValues: [{ value: { string: 'a' } }, { value: { string: 'b' }, description: 'new' }] },
    );
    assert.equal(JSON.parse(await text(await req(), 200)).propertyDefinition.value.allowedValues.length, 2);
  });

  test('accepts removing the allowedValues restriction', async () => {
    const req = await update('test.upd.unrestrict', { allowedValues: [{ value: { string: 'a' } }] }, {});
    assert.equal(JSON.parse(await text(await req(), 200)).propertyDefinition.value.allowedValues, undefined);
  });

  test('accepts changes of displayName, description, entityTypes and immutable without a version', async () => {
    const req = await update(
      'test.upd.cosmetic',
      { displayName: 'Before', description: 'before', entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'] },
      { displayName: 'After', description: 'after', entityTypes: ['urn:li:entityType:svc.dataFlow'], immutable: true },
    );
    const stored = JSON.parse(await text(await req(), 200)).propertyDefinition.value;
    assert.deepEqual([stored.displayName, stored.description, stored.entityTypes, stored.immutable], ['After', 'after', ['urn:li:entityType:svc.dataFlow'], true]);
  });

  test('accepts a breaking change with a greater version than the stored one', async () => {
    const req = await update(
      'test.upd.greaterVersion',
      { cardinality: 'MULTIPLE', version: '20240101000000' },
      { cardinality: 'SINGLE', version: '20240614080000' },
    );
    assert.equal(JSON.parse(await text(await req(), 200)).propertyDefinition.value.version, '20240614080000');
  });

  test('rejects a breaking change with the same version', async () => {
    const req = await update('test.upd.sameVersion', { cardinality: 'MULTIPLE', version: '20240614080000' }, { cardinality: 'SINGLE', version: '20240614080000' });
    await expectValidationError(s, req, 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
  });

  test('rejects a breaking change with a lower version', async () => {
    const req = await update('test.upd.lowerVersion', { cardinality: 'MULTIPLE', version: '20240614080000' }, { cardinality: 'SINGLE', version: '20230101000000' });
    await expectValidationError(s, req, 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
  });

  test('rejects a breaking change that drops the version', async () => {
    const req = await update('test.upd.droppedVersion', { cardinality: 'MULTIPLE', version: '20240614080000' }, { cardinality: 'SINGLE' });
    await expectValidationError(s, req, 400, 'Property definition cardinality cannot be changed from MULTI to SINGLE');
  });

  test('accepts a non-breaking change with a lower version, keeping the current version', async () => {
    const req = await update('test.upd.lowerNonBreaking', { version: '20240614080000', displayName: 'x' }, { version: '20200101000000', displayName: 'y' });
    const stored = JSON.parse(await text(await req(), 200)).propertyDefinition.value;
    assert.deepEqual([stored.version, stored.displayName], ['20240614080000', 'y']);
  });

  test('an update without a version keeps the current one', async () => {
    const req = await update('test.upd.keptVersion', { version: '20240614080000', displayName: 'x' }, { displayName: 'y' });
    const stored = JSON.parse(await text(await req(), 200)).propertyDefinition.value;
    assert.deepEqual([stored.version, stored.displayName], ['20240614080000', 'y']);
  });

  test('reports every breaking change of one update in one message', async () => {
    const req = await update(
      'test.upd.allBreaking',
      { cardinality: 'MULTIPLE', allowedValues: [{ value: { string: 'a' } }] },
      { valueType: 'urn:li:dataType:svc.rich_text', cardinality: 'SINGLE', allowedValues: [{ value: { string: 'z' } }] },
    );
    const message = await expectValidationError(
      s,
      req,
      400,
      'Value type cannot be changed as this is a backwards incompatible change',
      'Property definition cardinality cannot be changed from MULTI to SINGLE',
      'Cannot restrict values that were previously allowed',
    );
    // The three, and what lifts them (issue 48: the 400 says what fixes it).
    assert.equal(message.split('; ').length, 4, message);
    assert.match(message.split('; ')[3]!, /^A breaking change needs a version: give the time of the change as yyyyMMddHHmmss, e\.g\. [0-9]{14}$/);
  });
});

describe('bootstrapped data types and entity types', () => {
  const dataTypes = [
    { id: 'string', displayName: 'String', description: 'A string of characters.' },
    { id: 'number', displayName: 'Number', description: 'An integer or decimal number.' },
    { id: 'urn', displayName: 'Urn' },
    { id: 'rich_text', displayName: 'Rich Text', description: 'An attributed string of characters.' },
    { id: 'date', displayName: 'Date', description: 'A specific day, without time.' },
  ];

  test('each of the five data types is an entity with its key and dataTypeInfo', async () => {
    for (const t of dataTypes) {
      const urn = `urn:li:dataType:svc.${t.id}`;
      const body = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataType/${enc(urn)}`), 200));
      assert.deepEqual(Object.keys(body).sort(), ['dataTypeInfo', 'dataTypeKey', 'urn']);
      assert.equal(body.urn, urn);
      assert.deepEqual(body.dataTypeKey, { value: { id: `svc.${t.id}` } });
      assert.equal(body.dataTypeInfo.value.qualifiedName, `svc.${t.id}`);
      assert.equal(body.dataTypeInfo.value.displayName, t.displayName);
      if (t.description) assert.equal(body.dataTypeInfo.value.description, t.description);
      else assert.equal(typeof body.dataTypeInfo.value.description, 'string');
    }
  });

  test('the data type list holds exactly the five', async () => {
    const body = JSON.parse(await text(await s.request('/openapi/v3/entity/dataType?count=100'), 200));
    assert.deepEqual(body.entities.map((e: { urn: string }) => e.urn).sort(), dataTypes.map((t) => `urn:li:dataType:svc.${t.id}`).sort());
  });

  test('every registry entity has an entityType entity with qualifiedName svc.<name>', async () => {
    for (const e of registry.entities) {
      const urn = `urn:li:entityType:svc.${e.name}`;
      const body = JSON.parse(await text(await s.request(`/openapi/v2/entity/entityType/${enc(urn)}/entityTypeInfo`), 200));
      assert.deepEqual(body, { value: { qualifiedName: `svc.${e.name}`, displayName: e.name } });
    }
    const listed = JSON.parse(await text(await s.request('/openapi/v3/entity/entityType?count=1000'), 200));
    assert.deepEqual(listed.entities.map((x: { urn: string }) => x.urn).sort(), registry.entities.map((e) => `urn:li:entityType:svc.${e.name}`).sort());
  });

  test('an entity type outside the namespace does not exist', async () => {
    const res = await s.request(`/openapi/v3/entity/entityType/${enc('urn:li:entityType:dataset')}`);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), '');
  });
});

describe('qualified names', () => {
  test('a qualified name belongs to one property: another URN with the same name is refused with 409', async () => {
    const first = await createProperty(s, 'test.defs.sharedName');
    const other = propertyUrn('test.defs.sharedNameOther');
    const res = await writeDefinition(s, other, definitionOf('test.defs.sharedName'));
    assert.equal(res.status, 409);
    assert.deepEqual(await res.json(), { error: 'Conflict', message: `Qualified name test.defs.sharedName is already used by structured property ${first}` });
    await expectMissing(s.request(`/openapi/v3/entity/structuredProperty/${enc(other)}`));
  });
});
