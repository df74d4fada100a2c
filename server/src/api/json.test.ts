import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringifyJson, stringifyJsonWithDoublesAt } from './json.ts';

test('renders doubles of typed values with a decimal point', () => {
  const text = stringifyJson({ properties: [{ propertyUrn: 'urn:li:structuredProperty:x', values: [{ double: 60 }, { double: 0.5 }, { double: 1e21 }] }] });
  assert.equal(text, '{"properties":[{"propertyUrn":"urn:li:structuredProperty:x","values":[{"double":60.0},{"double":0.5},{"double":1.0E21}]}]}');
  assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify({ properties: [{ propertyUrn: 'urn:li:structuredProperty:x', values: [{ double: 60 }, { double: 0.5 }, { double: 1e21 }] }] })));
});

test('leaves other numbers alone and drops undefined like JSON.stringify', () => {
  assert.equal(stringifyJson({ version: 3, a: undefined, b: [1, undefined], d: new Date(0) }), '{"version":3,"b":[1,null],"d":"1970-01-01T00:00:00.000Z"}');
});

test('renders negative integral doubles, negative zero and exponents with a decimal point', () => {
  assert.equal(stringifyJson({ double: -2 }), '{"double":-2.0}');
  assert.equal(stringifyJson([{ double: -0 }, { double: 1e-7 }, { double: -1e21 }]), '[{"double":-0.0},{"double":1.0E-7},{"double":-1.0E21}]');
});

test('writes text without a double key exactly as JSON.stringify, and keeps a "double" inside strings as it is', () => {
  const value = { description: 'say "double": 60', n: 60, nested: [{ x: 1.5 }], none: undefined };
  assert.equal(stringifyJson(value), JSON.stringify(value));
  assert.equal(stringifyJson({ note: 'has "double": 1', v: { double: 1 } }), '{"note":"has \\"double\\": 1","v":{"double":1.0}}');
  assert.equal(stringifyJson(undefined), 'null');
});

test('writes the numbers at the given response paths as doubles, through lists, and no others', () => {
  const value = { data: { a: [{ f: 30, g: 30 }, { f: 0.5, g: 2 }], f: 7 } };
  assert.equal(stringifyJsonWithDoublesAt(value, { paths: new Set(['data.a.f']) }), '{"data":{"a":[{"f":30.0,"g":30},{"f":0.5,"g":2}],"f":7}}');
  assert.equal(stringifyJsonWithDoublesAt(value, { paths: new Set() }), JSON.stringify(value));
});

test('with keys that no other field has, rewrites the numbers under them in the native text, leaving strings alone', () => {
  const value = { data: { a: [{ f: 30, g: 30, s: 'say "f":3' }, { f: 1e21, g: -2, n: -0 }, { f: -4, t: 'x\\' }] } };
  assert.equal(
    stringifyJsonWithDoublesAt(value, { paths: new Set(['data.a.f']), keys: new Set(['f']) }),
    '{"data":{"a":[{"f":30.0,"g":30,"s":"say \\"f\\":3"},{"f":1.0E21,"g":-2,"n":0},{"f":-4.0,"t":"x\\\\"}]}}',
  );
});

test('typed values read the same whether their numbers are rewritten in the native text or the value is written anew', () => {
  // Rewritten in the text: no -0 can hide behind a 0, no list under the key.
  assert.equal(stringifyJson({ values: [{ double: 0.5 }, { double: 10 }, { double: -1e-7 }, { double: 123456789012345680000 }] }), '{"values":[{"double":0.5},{"double":10.0},{"double":-1.0E-7},{"double":123456789012345680000.0}]}');
  assert.equal(stringifyJson({ double: { nested: 3 }, other: { double: 4 } }), '{"double":{"nested":3},"other":{"double":4.0}}');
  assert.equal(stringifyJson({ s: 'a "double": 5 in text', t: 'ends in \\', v: [{ double: 7 }], n: 8 }), '{"s":"a \\"double\\": 5 in text","t":"ends in \\\\","v":[{"double":7.0}],"n":8}');
  assert.equal(stringifyJson({ double: Number.NaN, x: { double: Infinity } }), '{"double":null,"x":{"double":null}}');
  // Written anew: a zero (which may be -0), a list under the key.
  assert.equal(stringifyJson({ values: [{ double: 0 }, { double: -0 }, { double: 10 }] }), '{"values":[{"double":0.0},{"double":-0.0},{"double":10.0}]}');
  assert.equal(stringifyJson({ double: [1, 2.5, -0] }), '{"double":[1.0,2.5,-0.0]}');
});
