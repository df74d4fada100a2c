/**
 * Bad input gets the right 4xx with a message saying what was expected, and changes nothing: every
 * test compares a fingerprint of the whole database before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectRejected } from '../support/expectRejected.ts';
import { enc, startTestServer, type TestServer, expectMissing } from '../support/testServer.ts';

let s: TestServer;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,bad_input,PROD)';

before(async () => {
  s = await startTestServer();
  const res = await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' });
  assert.equal(res.status, 200);
});
after(async () => {
  await s.close();
});

const statusPath = `/openapi/v3/entity/dataset/${enc(DATASET)}/status?createIfNotExists=false`;

describe('rejections that change nothing', () => {
  test('malformed JSON is 400 naming the parse error', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value": {"removed": tru' }), 400, (body) => {
      const j = JSON.parse(body);
      assert.equal(j.error, 'Validation Error');
      assert.match(j.message, /^Malformed JSON in the request body/);
    });
  });

  test('a body that is not UTF-8 is 400 (it was stored with U+FFFD in place of its bytes)', async () => {
    const body = Buffer.concat([Buffer.from('{"value":{"description":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}}')]);
    const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/datasetProperties?createIfNotExists=false`;
    await expectRejected(s, () => s.request(path, { method: 'POST', body }), 400, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: 'Validation Error', message: 'The request body is not valid UTF-8' });
    });
  });

  test('a compressed body is 415 naming its encoding (gzip was read as malformed JSON; br was taken as plain text)', async () => {
    for (const encoding of ['gzip', 'br']) {
      await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', headers: { 'Content-Encoding': encoding } }), 415, (raw) => {
        assert.equal(JSON.parse(raw).message, `The request body must be sent uncompressed; got Content-Encoding "${encoding}"`);
      });
    }
  });

  test('a body breaking the aspect schema is 400 listing every violation', async () => {
    const body = JSON.stringify({ value: { properties: [{ propertyUrn: 5, values: [{ double: 1, string: 'x' }], extra: true }] } });
    await expectRejected(
      s,
      () => s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body }),
      400,
      (raw) => {
        const j = JSON.parse(raw);
        assert.equal(j.error, 'Validation Error');
        assert.match(j.message, /structuredProperties\.properties\.0\.propertyUrn: must be string/);
        assert.match(j.message, /structuredProperties\.properties\.0\.values\.0: a typed value must have exactly one key, "string" or "double"/);
        assert.match(j.message, /unknown field "extra"/);
      },
    );
  });

  test('a field DataHub types as a URN takes only a URN of its type (any string was stored)', async () => {
    const ds = enc(DATASET);
    const cases: [string, unknown, RegExp][] = [
      ['upstreamLineage', { upstreams: [{ dataset: 'garbage', type: 'COPY' }] }, /upstreamLineage\.upstreams\.0\.dataset: must be a dataset URN, urn:li:dataset:\(…\)/],
      ['upstreamLineage', { upstreams: [{ dataset: 'urn:li:corpuser:x', type: 'COPY' }] }, /must be a dataset URN/],
      ['schemaMetadata', { schemaName: 's', platform: 'garbage', version: 0, hash: '', platformSchema: {}, fields: [] }, /schemaMetadata\.platform: must be a dataPlatform URN/],
    ];
    for (const [aspect, value, message] of cases) {
      await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${ds}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 400, (raw) => {
        assert.match(JSON.parse(raw).message, message, aspect);
      });
    }
    const ok = await s.request(`/openapi/v3/entity/dataset/${ds}/upstreamLineage?createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ value: { upstreams: [{ dataset: 'urn:li:dataset:(urn:li:dataPlatform:hive,up,PROD)', type: 'COPY', auditStamp: { time: 1, actor: 'urn:li:corpuser:a' } }] } }),
    });
    assert.equal(ok.status, 200, await ok.text());
  });

  test('system metadata is DataHub\'s shape: a field of the wrong type is a 400 (it was stored and served as sent)', async () => {
    const batch = JSON.stringify([{ urn: DATASET, status: { value: { removed: false }, systemMetadata: { runId: 5, properties: [1, 2] } } }]);
    await expectRejected(s, () => s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: batch }), 400, (raw) => {
      const message = JSON.parse(raw).message as string;
      assert.match(message, /status\.systemMetadata\.runId: must be string/);
      assert.match(message, /status\.systemMetadata\.properties: must be object/);
    });
  });

  test('a wrong type in status is 400', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":"yes"}}' }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /status\.removed: must be boolean/);
    });
  });

  test('an unknown field beside value in a v3 body is named as a field of the body, not of the aspect', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true},"extra":1}' }), 400, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: 'Validation Error', message: 'body: unknown field "extra"' });
    });
  });

  test('a v3 body without the value wrapper is 400 saying the expected form', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"removed":true}' }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /must be \{"value": <aspect>/);
    });
  });

  test('an unparsable urn is 400 {"error":"Invalid urn!: <urn>"}', async () => {
    const bad = 'urn:li:dataset:(urn:li:dataPlatform:hive,unclosed';
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(bad)}/status`, { method: 'POST', body: '{"value":{"removed":true}}' }), 400, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: `Invalid urn!: ${bad}` });
    });
  });

  test('an unknown entity type inside the urn is 400 Invalid urn!', async () => {
    const bad = 'urn:li:FOOBAR:(urn:li:dataPlatform:hive,x,PROD)';
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(bad)}`), 400, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: `Invalid urn!: ${bad}` });
    });
  });

  test('a dataset urn with the wrong tuple arity is 400 Invalid urn!', async () => {
    const bad = 'urn:li:dataset:(urn:li:dataPlatform:hive,only_two)';
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(bad)}/status`, { method: 'POST', body: '{"value":{"removed":true}}' }), 400, (raw) => {
      assert.deepEqual(JSON.parse(raw), { error: `Invalid urn!: ${bad}` });
    });
  });

  test('an unknown entity type in the path is 400 naming the known types', async () => {
    await expectRejected(s, () => s.request('/openapi/v3/entity/notAType'), 400, (raw) => {
      const j = JSON.parse(raw);
      // DataHub's entity types, in order.
      assert.match(j.message, /Unknown entity type "notAType"; expected one of: agentSkill, aiAgent, /);
    });
  });

  test('a urn of another type than the path is 400', async () => {
    await expectRejected(s, () => s.request(`/openapi/v3/entity/chart/${enc(DATASET)}/status`, { method: 'POST', body: '{"value":{"removed":true}}' }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /is of entity type dataset, but the path names chart/);
    });
  });

  test('an unknown aspect is 400 naming the aspects of the entity type', async () => {
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/propertyDefinition`, { method: 'POST', body: '{"value":{}}' }), 400, (raw) => {
      // The key first, then the aspects of DataHub's registry for the type.
      assert.match(JSON.parse(raw).message, /Unknown aspect "propertyDefinition" for entity type dataset; expected one of: datasetKey, .*\bstatus\b/);
    });
  });

  test('a batch with one bad item writes none of them', async () => {
    const good = 'urn:li:dataset:(urn:li:dataPlatform:hive,batch_good,PROD)';
    const body = JSON.stringify([
      { urn: good, status: { value: { removed: false } } },
      { urn: DATASET, status: { value: { removed: 'no' } } },
    ]);
    await expectRejected(s, () => s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /status\.removed: must be boolean/);
    });
    await expectMissing(s.request(`/openapi/v3/entity/dataset/${enc(good)}`));
  });

  test('a v2 batch body sent to v3 is told the v3 form (it was "aspects: unknown field")', async () => {
    const body = JSON.stringify([{ urn: DATASET, aspects: { status: { value: { removed: true } } } }]);
    await expectRejected(s, () => s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body }), 400, (raw) => {
      assert.equal(JSON.parse(raw).message, 'body.0.aspects: "aspects" is the v2 form: v3 puts each aspect beside "urn", {"urn", "<aspect>": {"value": …}}');
    });
  });

  test('a key aspect that contradicts the urn is 400', async () => {
    await expectRejected(
      s,
      () => s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/datasetKey?createIfNotExists=false`, { method: 'POST', body: '{"value":{"platform":"urn:li:dataPlatform:x","name":"n","origin":"PROD"}}' }),
      400,
      (raw) => assert.match(JSON.parse(raw).message, /a key aspect must match the urn/),
    );
  });

  test('a patch whose result breaks the schema is 400', async () => {
    const body = JSON.stringify({ patch: [{ op: 'add', path: '/properties/urn:li:structuredProperty:x', value: { propertyUrn: 'urn:li:structuredProperty:x', values: [{ int: 3 }] } }], arrayPrimaryKeys: { properties: ['propertyUrn'] } });
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/structuredProperties`, { method: 'PATCH', body }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /values\.0: unknown field "int"/);
    });
  });

  test('a patch removing a missing path is 400 and names the operation', async () => {
    const body = JSON.stringify({ patch: [{ op: 'remove', path: '/removed/nothing' }] });
    await expectRejected(s, () => s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/status`, { method: 'PATCH', body }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /patch\[0\] \(remove \/removed\/nothing\)/);
    });
  });

  test('a path no route serves is 404 saying so, unlike a missing entity (empty body)', async () => {
    for (const [method, path] of [['GET', '/openapi/v4/entity/dataset'], ['PUT', statusPath]] as const) {
      await expectRejected(s, () => s.request(path, { method, body: method === 'PUT' ? '{}' : undefined }), 404, (body) => {
        assert.deepEqual(JSON.parse(body), {
          error: 'Not Found',
          message: `No route for ${method} ${path.split('?')[0]}: see /openapi/v3/api-docs for the API`,
        });
      });
    }
    const res = await s.request('/openapi/v4/entity/dataset');
    assert.equal(res.headers.get('not-found-reason'), null);
  });

  test('a malformed query parameter is 400 saying what was expected', async () => {
    await expectRejected(s, () => s.request('/openapi/v3/entity/dataset?count=abc'), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /query parameter count: expected an integer >= 1, got "abc"/);
    });
    await expectRejected(s, () => s.request(`${statusPath}&async=maybe`, { method: 'POST', body: '{"value":{"removed":true}}' }), 400, (raw) => {
      assert.match(JSON.parse(raw).message, /query parameter async: expected true or false/);
    });
  });

  test('a missing token is 401', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', token: null }), 401, (raw, res) => {
      assert.match(JSON.parse(raw).message, /Missing Authorization header: send "Authorization: Bearer <token>"/);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    });
  });

  test('without a token, even a malformed or oversized body gets 401 (the body is not read)', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value": {', token: null }), 401, (raw) => {
      assert.match(JSON.parse(raw).message, /Missing Authorization header/);
    });
  });

  test('a wrong token is 401', async () => {
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', token: 'not-a-token' }), 401, (raw) => {
      assert.match(JSON.parse(raw).message, /not valid/);
    });
  });

  test('a reader token on a write is 403', async () => {
    const created = await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'reader-bot', role: 'reader' }) });
    assert.equal(created.status, 201);
    const { token } = (await created.json()) as { token: string };
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: '{"value":{"removed":true}}', token }), 403, (raw) => {
      assert.match(JSON.parse(raw).error, /urn:li:corpuser:reader-bot is unauthorized to UPDATE entities/);
    });
  });

  test('a body over 5 MB is 413', async () => {
    const huge = JSON.stringify({ value: { removed: true, pad: 'x'.repeat(5 * 1024 * 1024) } });
    await expectRejected(s, () => s.request(statusPath, { method: 'POST', body: huge }), 413, (raw) => {
      assert.match(JSON.parse(raw).message, /larger than the limit of 5242880 bytes/);
    });
  });
});
