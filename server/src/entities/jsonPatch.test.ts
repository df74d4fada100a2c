import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPatch, parsePatchBody, type PatchOperation } from './jsonPatch.ts';
import { SvcError } from '../shared/errors.ts';

const keys = { properties: ['propertyUrn'] };
const doc = { properties: [{ propertyUrn: 'urn:li:structuredProperty:a', values: [{ double: 1 }] }] };

test('add on a missing key appends; on an existing key replaces the element', () => {
  const added = applyPatch(doc, [{ op: 'add', path: '/properties/urn:li:structuredProperty:b', value: { propertyUrn: 'urn:li:structuredProperty:b', values: [{ string: 'x' }] } }], keys);
  assert.deepEqual(added, { properties: [doc.properties[0], { propertyUrn: 'urn:li:structuredProperty:b', values: [{ string: 'x' }] }] });
  const replaced = applyPatch(added, [{ op: 'add', path: '/properties/urn:li:structuredProperty:a', value: { propertyUrn: 'urn:li:structuredProperty:a', values: [{ double: 2 }, { double: 3 }] } }], keys);
  assert.deepEqual((replaced as typeof doc).properties[0], { propertyUrn: 'urn:li:structuredProperty:a', values: [{ double: 2 }, { double: 3 }] });
  assert.equal((replaced as typeof doc).properties.length, 2);
});

test('add fills in the key field from the path when the value omits it', () => {
  const out = applyPatch({ properties: [] }, [{ op: 'add', path: '/properties/urn:li:structuredProperty:c', value: { values: [] } }], keys);
  assert.deepEqual(out, { properties: [{ values: [], propertyUrn: 'urn:li:structuredProperty:c' }] });
});

test('an add whose value names another key than its path is refused, saying so (it was reported as a duplicate entry)', () => {
  const op = { op: 'add' as const, path: '/properties/urn:li:structuredProperty:a', value: { propertyUrn: 'urn:li:structuredProperty:b', values: [] } };
  assert.throws(
    () => applyPatch(doc, [op], keys),
    (e: unknown) => e instanceof SvcError && e.message === `patch[0] (add /properties/urn:li:structuredProperty:a): the path names propertyUrn urn:li:structuredProperty:a, but the value's propertyUrn is "urn:li:structuredProperty:b"`,
  );
});

test('remove drops the keyed element and ignores a value sent with it', () => {
  const out = applyPatch(doc, [{ op: 'remove', path: '/properties/urn:li:structuredProperty:a', value: { anything: true } }], keys);
  assert.deepEqual(out, { properties: [] });
});

test('the input document is never modified', () => {
  const before = structuredClone(doc);
  applyPatch(doc, [{ op: 'remove', path: '/properties/urn:li:structuredProperty:a' }], keys);
  assert.deepEqual(doc, before);
});

test('without arrayPrimaryKeys arrays are addressed by index, as RFC 6902', () => {
  assert.deepEqual(applyPatch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/1' }, { op: 'add', path: '/a/-', value: 9 }]), { a: [1, 3, 9] });
  assert.deepEqual(applyPatch({ a: { b: 1 } }, [{ op: 'replace', path: '/a/b', value: 2 }, { op: 'copy', from: '/a/b', path: '/c' }, { op: 'move', from: '/a', path: '/d' }]), { c: 2, d: { b: 2 } });
});

test('~1 and ~0 escapes decode to / and ~', () => {
  assert.deepEqual(applyPatch({}, [{ op: 'add', path: '/a~1b~0c', value: 1 }]), { 'a/b~c': 1 });
});

test('a failed test op or a missing path is a VALIDATION error naming the operation', () => {
  assert.throws(() => applyPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), (e: unknown) => e instanceof SvcError && /patch\[0\] \(test \/a\): test failed/.test(e.message));
  assert.throws(() => applyPatch(doc, [{ op: 'remove', path: '/properties/urn:li:structuredProperty:zzz' }], keys), (e: unknown) => e instanceof SvcError && /does not exist/.test(e.message));
});

test('parsePatchBody accepts the DataHub body and a bare RFC 6902 array, and lists every problem', () => {
  assert.equal(parsePatchBody([{ op: 'remove', path: '/x' }]).ops.length, 1);
  assert.deepEqual(parsePatchBody({ patch: [], arrayPrimaryKeys: keys }).arrayPrimaryKeys, keys);
  assert.throws(
    () => parsePatchBody({ patch: [{ op: 'frobnicate', path: 'x' }, { op: 'add', path: '/a' }], arrayPrimaryKeys: { properties: [] }, extra: 1 }),
    (e: unknown) => e instanceof SvcError && e.violations.length === 5,
  );
});

test('a path through __proto__, constructor or prototype is refused and pollutes nothing', () => {
  for (const path of ['/__proto__/polluted', '/constructor/prototype/polluted', '/a/__proto__']) {
    assert.throws(() => applyPatch({ a: {} }, [{ op: 'add', path, value: true }]), (e: unknown) => e instanceof SvcError && /is not a member an aspect can have/.test(e.message));
  }
  assert.throws(() => applyPatch({}, [{ op: 'copy', from: '/__proto__', path: '/x' }]), SvcError);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('inherited members are not members of the document', () => {
  assert.throws(() => applyPatch({}, [{ op: 'remove', path: '/toString' }]), (e: unknown) => e instanceof SvcError && /does not exist/.test(e.message));
});

test('a move into its own child is refused, saying so (it was a 500), keyed paths too', () => {
  assert.throws(
    () => applyPatch(doc, [{ op: 'move', from: '/properties', path: '/properties/0' }]),
    (e: unknown) => e instanceof SvcError && e.message === 'patch[0] (move /properties/0): from /properties contains path /properties/0: a value cannot be moved into itself',
  );
  assert.throws(
    () => applyPatch(doc, [{ op: 'move', from: '/properties/urn:li:structuredProperty:a', path: '/properties/urn:li:structuredProperty:a/values/0' }], keys),
    (e: unknown) => e instanceof SvcError && /a value cannot be moved into itself/.test(e.message),
  );
  assert.deepEqual(applyPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/ab' }]), { ab: { b: 1 } }, 'a sibling whose name starts alike is not a child');
});

test('move and copy to a keyed element, as RFC 6902 defines them: the value leaves from (move) and becomes the element its path names', () => {
  const urns = ['a', 'b', 'c', 'd'].map((k) => `urn:li:structuredProperty:${k}`);
  const element = (urn: string, n: number) => ({ propertyUrn: urn, values: [{ double: n }] });
  fc.assert(
    fc.property(fc.subarray(urns, { minLength: 1 }), fc.constantFrom('move' as const, 'copy' as const), fc.nat(3), fc.nat(3), (present, op, f, p) => {
      const doc = { properties: present.map((u, i) => element(u, i)) };
      const from = present[f % present.length]!;
      const to = urns[p]!;
      const out = applyPatch(doc, [{ op, from: `/properties/${from}`, path: `/properties/${to}` }], keys) as typeof doc;
      // The reference: the array as a map from key to values.
      const expected = new Map(doc.properties.map((e) => [e.propertyUrn, e.values]));
      const moved = expected.get(from)!;
      if (op === 'move') expected.delete(from);
      expected.set(to, moved);
      assert.deepEqual(new Map(out.properties.map((e) => [e.propertyUrn, e.values])), expected, `${op} ${from} → ${to} over ${present.join(' ')}`);
      assert.equal(out.properties.length, expected.size, 'one element per key');
      if (op === 'move' && from === to) assert.deepEqual(out, doc, 'a move onto itself changes nothing, order included');
    }),
    { numRuns: 500 },
  );
});

test('a move to a key from something that is not an element is refused, saying so; from a missing key too', () => {
  assert.throws(
    () => applyPatch(doc, [{ op: 'move', from: '/properties/urn:li:structuredProperty:a/values', path: '/properties/urn:li:structuredProperty:b' }], keys),
    (e: unknown) => e instanceof SvcError && e.message.endsWith('the value at /properties/urn:li:structuredProperty:a/values must be an object with propertyUrn'),
  );
  assert.throws(
    () => applyPatch(doc, [{ op: 'copy', from: '/properties/urn:li:structuredProperty:zz', path: '/properties/urn:li:structuredProperty:b' }], keys),
    (e: unknown) => e instanceof SvcError && /path \/properties\/urn:li:structuredProperty:zz does not exist/.test(e.message),
  );
});

test('any sequence of keyed adds, replaces, removes, tests and index operations, as one patch, gives what a model of keyed elements gives (the index of keys kept between operations stays true)', () => {
  const KEYS = { properties: ['propertyUrn'] };
  const urn = (i: number) => `urn:li:structuredProperty:k${i}`;
  const step = fc.oneof(
    fc.record({ kind: fc.constant('add' as const), key: fc.nat(5), value: fc.nat(9) }),
    fc.record({ kind: fc.constant('replace' as const), key: fc.nat(5), value: fc.nat(9) }),
    fc.record({ kind: fc.constant('remove' as const), key: fc.nat(5) }),
    fc.record({ kind: fc.constant('test' as const), key: fc.nat(5) }),
    fc.record({ kind: fc.constant('inner' as const), key: fc.nat(5), value: fc.nat(9) }),
  );
  fc.assert(
    fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
      const model = new Map<string, number>();
      const ops: PatchOperation[] = [];
      for (const s of steps) {
        const at = urn(s.key);
        const exists = model.has(at);
        // Only the operations that apply: a refused one would refuse the whole patch.
        if (s.kind !== 'add' && !exists) continue;
        const path = `/properties/${at}`;
        if (s.kind === 'inner') {
          // A path inside an element, by index (any operation but a keyed one resets the index of keys).
          ops.push({ op: 'replace', path: `${path}/values/0`, value: { double: s.value } });
          model.set(at, s.value);
        } else if (s.kind === 'add' || s.kind === 'replace') {
          ops.push({ op: s.kind, path, value: { propertyUrn: at, values: [{ double: s.value }] } });
          model.set(at, s.value);
        } else if (s.kind === 'test') ops.push({ op: 'test', path, value: { propertyUrn: at, values: [{ double: model.get(at)! }] } });
        else {
          ops.push({ op: 'remove', path });
          model.delete(at);
        }
      }
      const doc = applyPatch({ properties: [] }, ops, KEYS) as { properties: { propertyUrn: string; values: { double: number }[] }[] };
      assert.deepEqual(
        doc.properties.map((p) => [p.propertyUrn, p.values[0]!.double]),
        [...model],
      );
    }),
    { numRuns: 500 },
  );
});
