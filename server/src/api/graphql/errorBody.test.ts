import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_LISTED_VIOLATIONS, SvcError } from '../../shared/errors.ts';
import { graphqlErrorParts } from './errorBody.ts';

test('an error of many violations gives the first of them and how many more', () => {
  const max = MAX_LISTED_VIOLATIONS;
  const few = graphqlErrorParts(SvcError.validation(['a', 'b']));
  assert.deepEqual(few, { message: 'a; b', extensions: { code: 400, type: 'BAD_REQUEST', violations: ['a', 'b'] } });
  const violations = Array.from({ length: 10_000 }, (_, i) => `property p${i} does not exist`);
  const many = graphqlErrorParts(SvcError.listing('PRECONDITION', violations));
  assert.equal(many.message, `${violations.slice(0, max).join('; ')}; … and 9,980 more problems`);
  assert.deepEqual(many.extensions, { code: 412, type: 'PRECONDITION_FAILED', violations: violations.slice(0, max) });
});
