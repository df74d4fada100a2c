import { test } from 'node:test';
import assert from 'node:assert/strict';
import { doubleText } from './doubles.ts';

test('an integral double gets .0; one with a fraction is written as JSON writes it', () => {
  assert.equal(doubleText(60), '60.0');
  assert.equal(doubleText(-2), '-2.0');
  assert.equal(doubleText(0), '0.0');
  assert.equal(doubleText(0.5), '0.5');
  assert.equal(doubleText(12345678.9), '12345678.9');
  assert.equal(doubleText(20240614), '20240614.0');
  assert.equal(doubleText(123456789012345680000), '123456789012345680000.0');
});

test('where JSON writes an exponent, the number is written as Java writes it, with a decimal point', () => {
  assert.equal(doubleText(1e21), '1.0E21');
  assert.equal(doubleText(-1e21), '-1.0E21');
  assert.equal(doubleText(1.5e300), '1.5E300');
  assert.equal(doubleText(Number.MAX_VALUE), '1.7976931348623157E308');
  assert.equal(doubleText(1e-7), '1.0E-7');
  assert.equal(doubleText(1.25e-7), '1.25E-7');
  assert.equal(doubleText(Number.MIN_VALUE), '5.0E-324');
});

test('negative zero keeps its sign', () => {
  assert.equal(doubleText(-0), '-0.0');
});

test('every text parses back to the same number, and holds a decimal point', () => {
  for (const n of [60, -2, 0, -0, 0.5, 1e21, -1e21, 1e-7, 1.25e-7, Number.MAX_VALUE, Number.MIN_VALUE, 9007199254740993, 1e300]) {
    const text = doubleText(n);
    assert.ok(Object.is(JSON.parse(text), n), `${text} reads back as ${n}`);
    assert.match(text, /^-?\d+\.\d+(E-?\d+)?$/, text);
  }
});
