import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getIntrospectionQuery } from 'graphql';
import { documentShapeProblem } from './documentShape.ts';

const limits = { length: 1000, nesting: 4 };

test('brackets of every kind count towards the nesting, up to the limit and no further', () => {
  assert.equal(documentShapeProblem('{ a(b: [{c: 1}]) }', limits), undefined);
  for (const deep of ['{ a { b { c { d { e } } } } }', '{ a(b: [[[[1]]]]) }', '{ a(b: {c: {d: {e: 1}}}) }', '((((( ))))) ']) {
    assert.match(documentShapeProblem(deep, limits) ?? '', /^The document nests deeper than 4 levels of braces, brackets and parentheses/, deep);
  }
  // Closing brackets that were never opened do not let the next ones nest deeper unnoticed.
  assert.equal(documentShapeProblem('}}}} { a { b } }', limits), undefined);
  assert.ok(documentShapeProblem(`${'['.repeat(100_000)}`, { length: 1e6, nesting: 64 }));
});

test('brackets in strings, block strings and comments are text, not structure', () => {
  const inside = '{'.repeat(50);
  for (const doc of [
    `{ a(b: "${inside}") }`,
    `{ a(b: "\\"${inside}") }`,
    `{ a(b: """${inside}""") }`,
    `{ a(b: """ \\""" ${inside} """) }`,
    `# ${inside}\n{ a }`,
    `{ a } # ${inside}\r{ b }`,
  ]) {
    assert.equal(documentShapeProblem(doc, limits), undefined, doc);
  }
  // After a string or comment ends, counting goes on.
  assert.ok(documentShapeProblem(`{ a(b: "}}}}") { b { c { d { e } } } } }`, limits));
  assert.ok(documentShapeProblem(`# }}}}\n{ a { b { c { d { e } } } } }`, limits));
  // An unterminated string ends at its line for the count (the parser refuses it).
  assert.ok(documentShapeProblem(`{ a(b: "x\n{{{{{`, limits));
});

test('a document longer than the limit is refused with its length', () => {
  const doc = (n: number) => `{ a(b: "${'x'.repeat(n)}") }`;
  assert.equal(documentShapeProblem(doc(1000 - doc(0).length), limits), undefined);
  assert.equal(documentShapeProblem(doc(1001 - doc(0).length), limits), 'The document is 1001 characters long, more than the 1000 a document may have: send long values as variables');
});

test('graphql-js’s standard introspection query fits the default limits', () => {
  assert.equal(documentShapeProblem(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true })), undefined);
});
