/**
 * Values stored before svc refused U+0000 and lone surrogates at the door (they went into `json`
 * columns, which take them) made every later write of the aspect fail. Upgrading repairs them: each
 * such escape becomes U+FFFD, everything else stays as it was, and the aspect can be written again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPool, type Pool } from '../../server/src/db/pool.ts';
import { migrate } from '../../server/src/db/migrate.ts';
import { createTestDatabase, enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,wedged,PROD)';
const KEY = { platform: 'urn:li:dataPlatform:hive', name: 'wedged', origin: 'PROD' };
let databaseUrl: string;
let pool: Pool;
let s: TestServer | undefined;

/** Writes `value` as the pre-upgrade server did (through the database function it called). */
async function oldWrite(aspect: string, value: unknown): Promise<unknown> {
  try {
    return await pool.query("SELECT svc_write_aspect($1, $2, 'datasetKey', $3, $4, '{\"runId\":\"old\"}', 'urn:li:corpuser:old', 'upsert')", [
      DATASET,
      aspect,
      JSON.stringify(KEY),
      JSON.stringify(value),
    ]);
  } catch (err) {
    throw new Error(`the write failed: ${(err as Error).message}`, { cause: err });
  }
}

async function stored(aspect: string): Promise<string[]> {
  const rows = await sql<{ t: string }>(databaseUrl, 'SELECT metadata::text AS t FROM aspects WHERE urn = $1 AND aspect = $2 ORDER BY version', [DATASET, aspect]);
  return rows.map((r) => r.t);
}

before(async () => {
  databaseUrl = await createTestDatabase();
  pool = createPool(databaseUrl, 2);
  await migrate(pool, '004_write_batch_values.sql');
});
after(async () => {
  await pool.end();
  await s?.close();
});

test('upgrading repairs values jsonb cannot hold, and the aspect can be written again', async () => {
  await oldWrite('datasetProperties', { description: 'first' });
  // Stored as {"description":"a\u0000b","name":"lone \ud800 and 😀"} (the emoji as its 4 UTF-8 bytes).
  await oldWrite('datasetProperties', { description: 'a\u0000b', name: 'lone \ud800 and \ud83d\ude00' });
  await sql(databaseUrl, `INSERT INTO aspects (urn, aspect, version, metadata, created_by)
                         VALUES ($1, 'subTypes', 0, '{"typeNames":["kept \\\\u0000 as text","x\\udc00","pair \\ud83d\\ude00"]}', 'urn:li:corpuser:old')`, [DATASET]);
  await sql(databaseUrl, `INSERT INTO timeseries_aspects (entity_type, aspect, urn, timestamp_millis, metadata, created_by)
                         VALUES ('dataset', 'datasetProfile', $1, 1, '{"timestampMillis":1,"messageId":"m\\u0000"}', 'urn:li:corpuser:old')`, [DATASET]);

  // The defect: a value of the same serialised size is compared with the stored one as jsonb, which fails.
  await assert.rejects(oldWrite('datasetProperties', { description: 'a123456b', name: 'lone 123456 and 1234' }), /the write failed: unsupported Unicode escape sequence/);

  assert.ok((await migrate(pool)).includes('005_input_rules.sql'));
  assert.deepEqual(await stored('datasetProperties'), ['{"description":"a\\ufffdb","name":"lone \\ufffd and 😀"}', '{"description":"first"}']);
  // An escaped backslash followed by "u0000" is text, not an escape, and an escaped pair is one character: both kept.
  assert.deepEqual(await stored('subTypes'), ['{"typeNames":["kept \\\\u0000 as text","x\\ufffd","pair \\ud83d\\ude00"]}']);
  const [profile] = await sql<{ t: string }>(databaseUrl, 'SELECT metadata::text AS t FROM timeseries_entries WHERE urn = $1', [DATASET]);
  assert.equal(profile!.t, '{"timestampMillis":1,"messageId":"m\\ufffd"}');

  s = await startTestServer({ DATABASE_URL: databaseUrl });
  const path = `/openapi/v3/entity/dataset/${enc(DATASET)}/datasetProperties`;
  const read = JSON.parse(await text(await s.request(path), 200)) as { datasetProperties: { value: unknown } };
  assert.deepEqual(read.datasetProperties.value, { description: 'a\ufffdb', name: 'lone \ufffd and 😀' });
  const subTypes = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/subTypes`), 200)) as { subTypes: { value: unknown } };
  assert.deepEqual(subTypes.subTypes.value, { typeNames: ['kept \\u0000 as text', 'x\ufffd', 'pair 😀'] });
  // The same size as the stored value (the case that failed), then another value.
  for (const description of ['a123456b', 'a-b']) {
    const body = JSON.stringify({ value: { description, name: 'lone 123456 and 1234' } });
    await text(await s.request(`${path}?createIfNotExists=false`, { method: 'POST', body }), 200);
  }
  assert.equal((await stored('datasetProperties')).length, 4, 'two new versions beside the repaired ones');
});
