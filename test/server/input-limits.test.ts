/**
 * What input may hold, wherever it enters: path segments, query parameters and bodies. Each class of
 * input that once reached Postgres (a 500) or was silently altered is refused with a 4xx whose message
 * names the problem, and the database is unchanged (its fingerprint is compared before and after).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectRejected, expectValidationError } from '../support/expectRejected.ts';
import { definitionOf, propertyUrn, writeDefinition } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,input_limits,PROD)';
const dataset = `/openapi/v3/entity/dataset/${enc(DATASET)}`;
const json = { 'content-type': 'application/json' };

before(async () => {
  s = await startTestServer();
  await text(await s.request(`${dataset}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
});
after(async () => {
  await s.close();
});

/** Expects 400 `{"error":"Validation Error","message"}` whose message matches `pattern`, with nothing changed. */
function refused(req: () => Promise<Response>, pattern: RegExp, status = 400): Promise<void> {
  return expectRejected(s, req, status, (raw) => {
    const body = JSON.parse(raw) as { error: string; message: string };
    assert.match(body.message, pattern, raw);
  });
}

describe('path segments', () => {
  test('malformed percent-encoding is 400 naming the segment', async () => {
    for (const segment of ['urn%ZZ', 'a%', '%E0%A4%A']) {
      await refused(() => s.request(`/openapi/v3/entity/dataset/${segment}`), new RegExp(`The path segment "${segment}" is not valid percent-encoding`));
    }
    // Open routes too: the check comes before any route.
    await refused(() => s.request('/openapi/swagger-ui/%ZZ', { token: null }), /not valid percent-encoding/);
  });

  test('a NUL in a path segment is 400', async () => {
    const urn = 'urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Ahive%2Cx%00%2CPROD%29';
    await refused(() => s.request(`/openapi/v3/entity/dataset/${urn}`), /contains the NUL character \(U\+0000\)/);
    await refused(() => s.request(`/openapi/v3/entity/dataset/${urn}/status`, { method: 'POST', body: '{"value":{"removed":true}}' }), /NUL character/);
  });

  test('a URN longer than 512 bytes URL-encoded is refused on every route, saying so', async () => {
    const long = `urn:li:dataset:(urn:li:dataPlatform:hive,${'n'.repeat(500)},PROD)`;
    const limit = /cannot provide an URN longer than 512 bytes \(when URL encoded\): this one is \d{3} bytes/;
    await refused(() => s.request(`/openapi/v3/entity/dataset/${enc(long)}`), limit);
    await refused(() => s.request(`/openapi/v3/entity/dataset/${enc(long)}/status`, { method: 'POST', body: '{"value":{"removed":false}}' }), limit);
    await refused(() => s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify([{ urn: long, status: { value: { removed: false } } }]) }), limit);
    // Non-ASCII characters count as their encoded bytes: 100 × "é" is 600 bytes encoded.
    const wide = `urn:li:dataset:(urn:li:dataPlatform:hive,${'é'.repeat(100)},PROD)`;
    await refused(() => s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify([{ urn: wide, status: { value: { removed: false } } }]) }), limit);
  });

  test('a URN with control characters or surrounding spaces is 400 Invalid urn!', async () => {
    for (const bad of ['urn:li:dataset:(urn:li:dataPlatform:hive,a\u0001b,PROD)', ' urn:li:tag:x', 'urn:li:tag:x ']) {
      await expectRejected(s, () => s.request('/openapi/v3/entity/tag?async=false', { method: 'POST', body: JSON.stringify([{ urn: bad, status: { value: { removed: false } } }]) }), 400, (raw) => {
        assert.deepEqual(JSON.parse(raw), { error: `Invalid urn!: ${bad}` });
      });
    }
  });
});

describe('query parameters', () => {
  test('a NUL in a query value is 400 naming the parameter', async () => {
    await refused(() => s.request('/api/tasks?subject=%00'), /query parameter subject: the value contains the NUL character/);
  });

  test('integers are digits within 2^53: 1e9, 1.5, -1 and 2^63 are refused alike', async () => {
    for (const count of ['1e9', '1.5', '-1', '0x10', '9223372036854775808']) {
      await refused(() => s.request(`/openapi/v3/entity/dataset?count=${count}`), /query parameter count: expected an integer >= 1, got "[^"]+" \(digits only, at most 9007199254740991\)/);
    }
    await refused(() => s.request(`${dataset}/status?version=9223372036854775808`), /query parameter version: expected an integer >= 0, got "9223372036854775808"/);
  });

  test('an unknown query parameter is 400 listing the ones the route takes', async () => {
    await refused(() => s.request('/openapi/v3/entity/dataset?count[]=1'), /unknown query parameter "count\[\]"; this route takes: aspects, aspectNames, count, scrollId/);
    await refused(
      () => s.request(`${dataset}/status?createIfNotExist=false`, { method: 'POST', body: '{"value":{"removed":true}}' }),
      /unknown query parameter "createIfNotExist"; this route takes: createIfNotExists, createIfEntityNotExists, async, systemMetadata/,
    );
    // The token routes too (they took any, and POST created a token).
    const tokens = async () => ((await (await s.request('/api/tokens')).json()) as { tokens: unknown[] }).tokens.length;
    const before = await tokens();
    await refused(() => s.request('/api/tokens?zz=1', { method: 'POST', body: '{"name":"q","role":"reader"}' }), /unknown query parameter "zz"; this route takes: none/);
    await refused(() => s.request('/api/tokens?zz=1'), /unknown query parameter "zz"; this route takes: none/);
    await refused(() => s.request('/api/tokens/nope?zz=1', { method: 'DELETE' }), /unknown query parameter "zz"; this route takes: none/);
    assert.equal(await tokens(), before, 'no token created');
  });

  test('an enum lists only its real values', async () => {
    await refused(() => s.request('/api/tasks?state=DROP'), /query parameter state: expected one of PENDING, RUNNING, SUCCEEDED, got "DROP"$/);
    await refused(
      () => s.request('/api/tasks?kind=nope'),
      /query parameter kind: expected one of property-hard-delete, property-stale-values, timeseries-truncate, search-index-rebuild, got "nope"$/,
    );
  });

  test('a forged scroll id, or one of another listing, is refused; a real one pages on', async () => {
    for (let i = 0; i < 3; i++) {
      const urn = `urn:li:tag:scroll${i}`;
      await text(await s.request(`/openapi/v3/entity/tag/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    }
    const first = JSON.parse(await text(await s.request('/openapi/v3/entity/tag?count=2'), 200)) as { scrollId: string; entities: { urn: string }[] };
    assert.deepEqual(first.entities.map((e) => e.urn), ['urn:li:tag:scroll0', 'urn:li:tag:scroll1']);
    const next = JSON.parse(await text(await s.request(`/openapi/v3/entity/tag?count=2&scrollId=${first.scrollId}`), 200)) as { entities: { urn: string }[] };
    assert.deepEqual(next.entities.map((e) => e.urn), ['urn:li:tag:scroll2']);

    const forged = Buffer.from(JSON.stringify({ after: 'urn:li:tag:scroll0' })).toString('base64url');
    const [payload] = first.scrollId.split('.');
    const notThisListing = /scrollId: ".*" is not a scroll id this server returned for this listing/;
    for (const bad of [forged, `${payload}.AAAAAAAAAAAAAAAAAAAAAA`, `${Buffer.from(JSON.stringify({ s: 'tag:ASCENDING', a: '\u0000' })).toString('base64url')}.x`]) {
      await refused(() => s.request(`/openapi/v3/entity/tag?scrollId=${bad}`), notThisListing);
    }
    await refused(() => s.request(`/openapi/v3/entity/dataset?scrollId=${first.scrollId}`), notThisListing);
    await refused(() => s.request(`/openapi/v3/entity/tag?sortOrder=DESCENDING&scrollId=${first.scrollId}`), notThisListing);
  });
});

describe('bodies', () => {
  test('a NUL in any string of a body is 400 naming where it is', async () => {
    const cases: [string, string, RegExp][] = [
      ['/openapi/v3/entity/dataset', JSON.stringify([{ urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,x\u0000,PROD)', status: { value: { removed: false } } }]), /body\[0\]\.urn: the string contains the NUL character/],
      [`${dataset}/status?createIfNotExists=false`, JSON.stringify({ value: { removed: false }, systemMetadata: { runId: 'r\u0000' } }), /body\.systemMetadata\.runId: the string contains the NUL/],
      [`${dataset}/datasetProperties?createIfNotExists=false`, JSON.stringify({ value: { customProperties: { 'k\u0000': 'v' } } }), /body\.value\.customProperties: a field name contains the NUL/],
      [`${dataset}/structuredProperties?createIfNotExists=false`, JSON.stringify({ value: { properties: [{ propertyUrn: 'urn:li:structuredProperty:a\u0000', values: [{ string: 'x\u0000' }] }] } }), /properties\[0\]\.propertyUrn: the string contains the NUL[\s\S]*values\[0\]\.string: the string contains the NUL/],
      [`/openapi/v3/entity/structuredProperty/${enc(propertyUrn('limits.nul'))}/propertyDefinition`, JSON.stringify({ value: definitionOf('limits.nul\u0000') }), /body\.value\.qualifiedName: the string contains the NUL/],
    ];
    for (const [path, body, pattern] of cases) await refused(() => s.request(path, { method: 'POST', body }), pattern);
  });

  test('a lone surrogate is 400: it is not valid Unicode', async () => {
    await refused(
      () => s.request(`${dataset}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"a\\ud800b"}}' }),
      /body\.value\.description: the string contains a lone UTF-16 surrogate/,
    );
    // A surrogate pair is one character: accepted and kept.
    const res = await s.request(`${dataset}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"a\\ud83d\\ude00b"}}' });
    assert.equal(JSON.parse(await text(res, 200)).datasetProperties.value.description, 'a😀b');
  });

  test('a value refused twice is refused the same way: nothing stored can block the aspect', async () => {
    for (let i = 0; i < 2; i++) {
      await refused(() => s.request(`${dataset}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"a\\u0000b"}}' }), /NUL/);
    }
    await text(await s.request(`${dataset}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"description":"after"}}' }), 200);
  });

  test('numbers out of range of their field are 400, never a database error', async () => {
    await refused(
      () => s.request(`${dataset}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: '{"value":{"timestampMillis":1e300}}' }),
      /datasetProfile\.timestampMillis: must be <= 9007199254740991/,
    );
    await refused(
      () => s.request(`${dataset}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: '{"value":{"timestampMillis":1000,"rowCount":1e400}}' }),
      /body\.value\.rowCount: the number is out of range/,
    );
  });

  test('an integer beyond 2^53 is refused instead of rounded, wherever it is', async () => {
    for (const body of ['{"value":{"timestampMillis":1000,"rowCount":9007199254740993}}', '{"value":{"timestampMillis":1000},"systemMetadata":{"n":-12345678901234567890}}']) {
      await refused(() => s.request(`${dataset}/datasetProfile?createIfNotExists=false`, { method: 'POST', body }), /the integer -?\d+ is beyond ±9007199254740991 and cannot be kept exactly/);
    }
    // Digits inside a string are a string; the largest exact integer is accepted.
    await text(await s.request(`${dataset}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: '{"value":{"timestampMillis":9007199254740991,"messageId":"12345678901234567890"}}' }), 200);
  });

  test('JSON nested deeper than 64 levels is 400 in any part of the body', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    await refused(
      () => s.request(`${dataset}/status?createIfNotExists=false`, { method: 'POST', body: `{"value":{"removed":false},"systemMetadata":${deep(10_000)}}` }),
      /body\.systemMetadata\.a\.a.*: nested deeper than 64 levels of objects and arrays/,
    );
    await refused(() => s.request('/openapi/v3/entity/dataset', { method: 'POST', body: `[${'['.repeat(100)}${']'.repeat(100)}]` }), /nested deeper than 64 levels/);
  });

  test('a body that is not sent as JSON is 415 saying which types are taken', async () => {
    const path = `${dataset}/status?createIfNotExists=false`;
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      await expectRejected(s, () => s.request(path, { method: 'POST', body: '{"value":{"removed":true}}', headers: { 'content-type': type } }), 415, (raw) => {
        assert.deepEqual(JSON.parse(raw), { error: 'Unsupported Media Type', message: `The request body must be sent with Content-Type application/json; got "${type}"` });
      });
    }
    // fetch sends a string body as text/plain unless told otherwise: a Blob without a type sends none.
    await expectRejected(s, () => fetch(`${s.url}${path}`, { method: 'POST', body: new Blob(['{"value":{"removed":true}}']), headers: { authorization: 'Bearer test-admin-token' } }), 415, (raw) => {
      assert.match(JSON.parse(raw).message, /Content-Type application\/json; got none/);
    });
    await expectRejected(s, () => s.request(path, { method: 'POST', body: '{"value":{"removed":true}}', headers: { 'content-type': 'application/json; charset=latin1' } }), 415, (raw) => {
      assert.match(JSON.parse(raw).message, /must be UTF-8; got charset "latin1"/);
    });
    // A JSON Patch takes its own type and plain JSON, nothing else.
    const patch = JSON.stringify({ patch: [{ op: 'add', path: '/removed', value: true }] });
    await expectRejected(s, () => s.request(`${dataset}/status`, { method: 'PATCH', body: patch, headers: { 'content-type': 'text/plain' } }), 415, (raw) => {
      assert.match(JSON.parse(raw).message, /Content-Type application\/json-patch\+json or application\/json; got "text\/plain"/);
    });
    for (const type of ['application/json-patch+json', 'application/json; charset=utf-8']) {
      await text(await s.request(`${dataset}/status`, { method: 'PATCH', body: patch, headers: { 'content-type': type } }), 200);
    }
    await text(await s.request(`${dataset}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}', headers: json }), 200);
  });
});

describe('structured property rules at the door', () => {
  test('a definition whose qualifiedName is not its URN id is refused', async () => {
    await expectValidationError(
      s,
      () => writeDefinition(s, propertyUrn('limits.urnName'), definitionOf('limits.otherName')),
      400,
      'qualifiedName limits.otherName must be the id of the urn urn:li:structuredProperty:limits.urnName',
    );
  });

  test('setting a property that does not exist says so, with DataHub\'s words after', async () => {
    const missing = propertyUrn('limits.missing');
    await expectValidationError(
      s,
      () => s.request(`${dataset}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: missing, values: [{ string: 'a' }] }] } }) }),
      412,
      `Structured property ${missing} does not exist: create its definition first (Unexpected null value found for ${missing} Structured Property Definition.)`,
    );
  });
});

describe('messages of other refusals', () => {
  test('a failed precondition is titled Precondition Failed', async () => {
    await expectRejected(s, () => s.request(`${dataset}/status`, { method: 'POST', body: '{"value":{"removed":false}}' }), 412, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: 'Precondition Failed', message: 'Cannot perform CREATE since the aspect already exists.', reason: 'AspectExists' });
    });
  });

  test('a 403 carries DataHub\'s line and a message saying which role is needed', async () => {
    const created = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'limits-writer', role: 'writer' }) });
    const { token } = JSON.parse(await text(created, 201)) as { token: string };
    await expectRejected(s, () => s.request('/api/tokens', { token }), 403, (raw) => {
      assert.deepEqual(JSON.parse(raw), {
        error: 'urn:li:corpuser:limits-writer is unauthorized to manage tokens.',
        message: 'This needs a token with the admin role; the token used has the writer role',
      });
    });
  });

  test('a task id that cannot exist is 404 with a message, and a malformed one is 400', async () => {
    for (const id of ['99999999999999999999', '0', '424242']) {
      await expectRejected(s, () => s.request(`/api/tasks/${id}`), 404, (raw, res) => {
        assert.deepEqual(JSON.parse(raw), { error: 'Not Found', message: `No task with id ${id}` });
        assert.equal(res.headers.get('not-found-reason'), null);
      });
    }
    await refused(() => s.request('/api/tasks/abc'), /task id: expected a number such as 42, got "abc"/);
  });

  test('a missing token is 404 with a message, not an empty entity 404', async () => {
    await expectRejected(s, () => s.request('/api/tokens/no-such-token', { method: 'DELETE' }), 404, (raw, res) => {
      assert.deepEqual(JSON.parse(raw), { error: 'Not Found', message: 'No token with id no-such-token' });
      assert.equal(res.headers.get('not-found-reason'), null);
    });
  });
});
