import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, getIntrospectionQuery, parse, validate } from 'graphql';
import { introspectionDepthRule, isIntrospection } from './introspection.ts';

const schema = buildSchema('type Query { a: String }');
const errors = (doc: string, limit: number) => validate(schema, parse(doc), [introspectionDepthRule(limit)]).map((e) => e.message);
const chain = (n: number) => `{ __schema { types { fields { type ${'{ ofType '.repeat(n)}{ name }${' }'.repeat(n)} } } } }`;

test('__schema is held to its depth limit: each field, inline fragment and fragment spread a level', () => {
  // __schema, types, fields, type, n × ofType, name: n + 5 levels.
  assert.deepEqual(errors(chain(16), 21), []);
  assert.deepEqual(errors(chain(17), 21), ['Introspection depth limit of 21 exceeded: __schema is selected more than 21 levels deep.']);
  assert.deepEqual(errors(chain(60), 21), ['Introspection depth limit of 21 exceeded: __schema is selected more than 21 levels deep.']);
  // A fragment spread and an inline fragment are a level each.
  assert.deepEqual(errors('{ __schema { types { ...T } } } fragment T on __Type { name }', 4), []);
  assert.equal(errors('{ __schema { types { ...T } } } fragment T on __Type { name }', 3).length, 1);
  assert.deepEqual(errors('{ __schema { types { ... on __Type { name } } } }', 4), []);
  assert.equal(errors('{ __schema { types { ... on __Type { name } } } }', 3).length, 1);
  // Other fields are graphql-armor's to count.
  assert.deepEqual(errors('{ a }', 1), []);
});

test('the standard introspection query fits the default limit', () => {
  const doc = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true });
  assert.deepEqual(validate(schema, parse(doc), [introspectionDepthRule()]), []);
  // 18 levels deep by this count.
  assert.deepEqual(validate(schema, parse(doc), [introspectionDepthRule(18)]), []);
  assert.equal(validate(schema, parse(doc), [introspectionDepthRule(17)]).length, 1);
});

test('fragments spread over and over, or in a cycle, are counted once per level and end', () => {
  let doc = '{ __schema { types { ...F0 } } } ';
  for (let i = 0; i < 30; i++) doc += `fragment F${i} on __Type { ${Array.from({ length: 50 }, () => `...F${i + 1}`).join(' ')} } `;
  doc += 'fragment F30 on __Type { name }';
  assert.equal(errors(doc, 21).length, 1);
  assert.equal(errors('{ __schema { types { ...A } } } fragment A on __Type { ...B } fragment B on __Type { ...A }', 21).length, 0);
});

test('an operation introspects when it selects __schema, directly or through fragments', () => {
  const is = (doc: string, operationName?: string) => isIntrospection({ document: parse(doc), operationName });
  assert.equal(is('{ __schema { queryType { name } } }'), true);
  assert.equal(is('{ ...F } fragment F on Query { ... on Query { __schema { queryType { name } } } }'), true);
  assert.equal(is('{ a __typename __type(name: "Query") { name } }'), false);
  assert.equal(is('query A { a } query B { __schema { queryType { name } } }', 'A'), false);
  assert.equal(is('query A { a } query B { __schema { queryType { name } } }', 'B'), true);
});
