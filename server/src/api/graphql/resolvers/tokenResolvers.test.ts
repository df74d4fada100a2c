import assert from 'node:assert/strict';
import test from 'node:test';
import { tokenQuery } from './tokenResolvers.ts';

test('datahub-gc’s filter finds the tokens that are not revoked and expired before now', () => {
  assert.deepEqual(tokenQuery([{ field: 'expiresAt', values: ['1718352000000'], condition: 'LESS_THAN' }]), { active: true, expiresBefore: { at: 1718352000000, inclusive: false } });
  assert.deepEqual(tokenQuery([{ field: 'expiresAt', values: ['5'], condition: 'GREATER_THAN_OR_EQUAL_TO' }, { field: 'actorUrn', values: ['urn:li:corpuser:bot'] }]), {
    active: true,
    expiresAfter: { at: 5, inclusive: true },
    actor: 'urn:li:corpuser:bot',
  });
  assert.deepEqual(tokenQuery(null), { active: true });
});

test('a token filter svc cannot serve is refused, every one named', () => {
  assert.throws(
    () =>
      tokenQuery([
        { field: 'name', values: ['x'] },
        { field: 'expiresAt', values: ['soon'], condition: 'LESS_THAN' },
        { field: 'ownerUrn', values: ['urn:li:corpuser:a'], condition: 'CONTAIN' },
        { field: 'expiresAt', values: ['1', '2'], condition: 'LESS_THAN', negated: true },
      ]),
    (err: Error) => {
      assert.match(err.message, /filters\[0\]: tokens are filtered on expiresAt .*, not on "name"/);
      assert.match(err.message, /filters\[1\]: expiresAt is compared with a time in epoch milliseconds, got "soon"/);
      assert.match(err.message, /filters\[2\]: ownerUrn takes EQUAL, not CONTAIN/);
      assert.match(err.message, /filters\[3\]: negated filters are not taken on tokens/);
      assert.match(err.message, /filters\[3\]: expected one value, got 2/);
      return true;
    },
  );
});
