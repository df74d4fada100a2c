import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, parse } from 'graphql';
import { floatPaths } from './floatPaths.ts';

const schema = buildSchema('type Query { a: A } type A { x: Float, n: Int, a: A }');

test('the Floats an operation selects, through fragments', () => {
  const places = floatPaths(schema, parse('{ a { x n ... on A { a { ...F } } } } fragment F on A { x }'));
  assert.deepEqual([...places.paths].sort(), ['data.a.a.x', 'data.a.x']);
});

test('a fragment spread over and over is walked once at each path', () => {
  let doc = '{ a { ...F0 } } ';
  for (let i = 0; i < 5; i++) doc += `fragment F${i} on A { ${Array.from({ length: 100 }, () => `...F${i + 1}`).join(' ')} } `;
  doc += 'fragment F5 on A { x a { x } }';
  // 100^5 spreads if each were walked where it is spread.
  assert.deepEqual([...floatPaths(schema, parse(doc)).paths].sort(), ['data.a.a.x', 'data.a.x']);
});
