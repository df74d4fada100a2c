/**
 * Input rules of requests that disagreed with the README (issue 48), through HTTP:
 * - query strings: every name and value is valid percent-encoding of UTF-8 on every kind of route
 *   (OpenAPI, Rest.li, GraphQL's GET), else a 400 naming the parameter and the bytes, nothing changed;
 * - JSON Patch `move` and `copy` to `/properties/<urn>` (OpenAPI v2 and v3, Rest.li PATCH proposals)
 *   do what RFC 6902 says, checked like any set of values.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expectRejected, expectValidationError } from '../support/expectRejected.ts';
import { createDataset, createProperty, datasetUrn, patchValues, propertyUrn, readValues, setValues } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const percent = (bytes: readonly number[]) => bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
const utf8 = new TextDecoder('utf-8', { fatal: true });
const isUtf8 = (bytes: number[]) => {
  try {
    utf8.decode(new Uint8Array(bytes));
    return true;
  } catch {
    return false;
  }
};

describe('percent-encoded query strings', () => {
  /** Routes of each kind, with the parameter that carries the generated value. */
  const ROUTES: { name: string; url: (v: string) => string; restli?: true; graphql?: true }[] = [
    { name: 'OpenAPI search', url: (v) => `/openapi/v3/entity/dataset?query=${v}` },
    { name: 'OpenAPI tasks', url: (v) => `/api/tasks?subject=${v}` },
    { name: 'Rest.li', url: (v) => `/aspects/${enc(datasetUrn('q'))}?aspect=${v}&version=0`, restli: true },
    { name: 'GraphQL GET', url: (v) => `/api/graphql?query=${v}`, graphql: true },
  ];

  test('bytes that are not UTF-8 (random, overlong, surrogates, past U+10FFFF) are refused on every kind of route, naming the bytes', async () => {
    const bytes = fc.oneof(
      fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 4 }).filter((b) => !isUtf8(b)),
      fc.constantFrom([0xc0, 0xaf], [0xc1, 0x81], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xff], [0xe2, 0x82]),
    );
    await fc.assert(
      fc.asyncProperty(bytes, fc.constantFrom(...ROUTES), fc.constantFrom('', 'name:', 'a%20'), async (b, route, prefix) => {
        await expectRejected(s, () => s.request(route.url(`${prefix}${percent(b)}`)), 400, (raw) => {
          const body = JSON.parse(raw) as { message?: string; errors?: { message: string }[] };
          const message = body.errors?.[0]?.message ?? body.message ?? '';
          assert.match(message, /the value ".*" is not valid percent-encoding: ".+" is not UTF-8 \(.+\); expected UTF-8 bytes written as %XX/, `${route.name}: ${raw}`);
        });
      }),
      { numRuns: 40 },
    );
  });

  test('a % without two hexadecimal digits is refused, in a value or a name', async () => {
    for (const bad of ['%ZZ', '%', '%2', '%G1']) {
      await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=name${bad}`), 400, 'query parameter query: the value', 'is not % and two hexadecimal digits');
      await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?x${bad}=1`), 400, 'The query parameter name', 'is not valid percent-encoding');
    }
  });

  test('valid encodings of any text still reach the route: a search for an encoded é finds its dataset', async () => {
    const p = await createProperty(s, 'test.encoded.label');
    const ds = await createDataset(s, 'encoded');
    await text(await setValues(s, ds, [{ propertyUrn: p, values: [{ string: 'café ☕' }] }]), 200);
    await s.svc.catalog.searchOutbox.deliverAll();
    const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.test_encoded_label:"café ☕"')}`);
    assert.deepEqual((JSON.parse(await text(res, 200)) as { entities: { urn: string }[] }).entities.map((e) => e.urn), [ds]);
  });
});

describe('JSON Patch move and copy of keyed properties', () => {
  const restliPatch = (urn: string, patch: unknown[]) =>
    s.request('/aspects?action=ingestProposal', {
      method: 'POST',
      headers: { 'X-RestLi-Protocol-Version': '2.0.0' },
      body: JSON.stringify({
        proposal: { entityType: 'dataset', entityUrn: urn, changeType: 'PATCH', aspectName: 'structuredProperties', aspect: { value: JSON.stringify({ patch, arrayPrimaryKeys: { properties: ['propertyUrn'] } }), contentType: 'application/json-patch+json' } },
      }),
    });

  test('a move gives the target property the values of the source and removes the source, on v2, v3 and Rest.li; a copy keeps the source', async () => {
    const [a, b] = [await createProperty(s, 'test.move.a'), await createProperty(s, 'test.move.b')];
    let n = 0;
    for (const via of ['v3', 'v2', 'restli'] as const) {
      for (const op of ['move', 'copy'] as const) {
        const ds = await createDataset(s, `move${n++}`);
        await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'x' }] }]), 200);
        const patch = [{ op, from: `/properties/${a}`, path: `/properties/${b}` }];
        await text(await (via === 'restli' ? restliPatch(ds, patch) : patchValues(s, ds, patch, via)), 200);
        const expected = [...(op === 'copy' ? [{ propertyUrn: a, values: [{ string: 'x' }] }] : []), { propertyUrn: b, values: [{ string: 'x' }] }];
        assert.deepEqual(await readValues(s, ds), expected, `${op} via ${via}`);
      }
    }
  });

  test('a move onto an existing property replaces its values; onto itself changes nothing', async () => {
    const [a, b] = [propertyUrn('test.move.a'), propertyUrn('test.move.b')];
    const ds = await createDataset(s, 'moveOnto');
    await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'x' }] }, { propertyUrn: b, values: [{ string: 'y' }] }]), 200);
    await text(await patchValues(s, ds, [{ op: 'move', from: `/properties/${a}`, path: `/properties/${a}` }]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: a, values: [{ string: 'x' }] }, { propertyUrn: b, values: [{ string: 'y' }] }]);
    await text(await patchValues(s, ds, [{ op: 'move', from: `/properties/${a}`, path: `/properties/${b}` }]), 200);
    assert.deepEqual(await readValues(s, ds), [{ propertyUrn: b, values: [{ string: 'x' }] }]);
  });

  test('a moved value is checked like any set: to a property that does not exist (412), of another type (400), nothing changed', async () => {
    const a = propertyUrn('test.move.a');
    const n = await createProperty(s, 'test.move.number', { valueType: 'urn:li:dataType:svc.number' });
    const ds = await createDataset(s, 'moveChecked');
    await text(await setValues(s, ds, [{ propertyUrn: a, values: [{ string: 'x' }] }]), 200);
    await expectValidationError(s, () => patchValues(s, ds, [{ op: 'move', from: `/properties/${a}`, path: `/properties/${n}` }]), 400, `Property: ${n}, value: {string=x} should be a number`);
    const missing = propertyUrn('test.move.missing');
    await expectValidationError(s, () => patchValues(s, ds, [{ op: 'copy', from: `/properties/${a}`, path: `/properties/${missing}` }]), 412, `Structured property ${missing} does not exist`);
    await expectValidationError(s, () => patchValues(s, ds, [{ op: 'move', from: `/properties/${a}/values`, path: `/properties/${n}` }]), 400, 'must be an object with propertyUrn');
  });
});
