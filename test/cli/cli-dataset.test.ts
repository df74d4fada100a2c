/**
 * `svc dataset upsert` and `svc dataset get`, run as a child process against a started server: the
 * seed's dataset with dataset-level and field-level structured properties (written on the field's
 * schemaField URN), what REST reads back, a refused value, unknown keys and a missing dataset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const BIN = resolve(import.meta.dirname, '../../bin/svc.mjs');
let s: TestServer;
let dir: string;

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, SVC_GMS_URL: s.url, SVC_GMS_TOKEN: ADMIN_TOKEN, SVC_ENV_FILE: join(dir, 'none') } }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const DEPRECATION = 'urn:li:structuredProperty:io.acryl.dataManagement.deprecationDate';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,user.clicks,PROD)';

before(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-ds-'));
  writeFileSync(
    join(dir, 'properties.yaml'),
    `- id: io.acryl.privacy.retentionTime
  type: number
  cardinality: MULTIPLE
  entity_types: [dataset, dataFlow]
  allowed_values: [{value: 30}, {value: 60}, {value: 365}]
- id: io.acryl.dataManagement.deprecationDate
  type: date
  entity_types: [schemaField]
`,
  );
  const r = await svc(['properties', 'upsert', '-f', join(dir, 'properties.yaml')]);
  assert.equal(r.code, 0, r.stderr);
});
after(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

test('upsert writes the dataset, its structured properties and its fields’ ones; get shows them keyed by property URN', async () => {
  const path = join(dir, 'dataset.yaml');
  writeFileSync(
    path,
    `- id: user.clicks
  platform: hive
  description: Clicks of users
  subtype: Table
  properties:
    owner: web
  structured_properties:
    io.acryl.privacy.retentionTime: [30, 365]
  schema:
    fields:
      - id: ip
        structured_properties:
          io.acryl.dataManagement.deprecationDate: "2023-01-01"
      - id: user_id
`,
  );
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Update succeeded for urn ${DATASET}.\n`);

  const rest = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}`), 200));
  assert.deepEqual(rest.structuredProperties.value.properties, [{ propertyUrn: RETENTION, values: [{ double: 30 }, { double: 365 }] }]);
  assert.deepEqual(rest.datasetProperties.value, { name: 'user.clicks', description: 'Clicks of users', customProperties: { owner: 'web' } });
  const field = `urn:li:schemaField:(${DATASET},ip)`;
  const fieldProps = JSON.parse(await text(await s.request(`/openapi/v3/entity/schemaField/${enc(field)}/structuredProperties`), 200));
  assert.deepEqual(fieldProps.structuredProperties.value.properties, [{ propertyUrn: DEPRECATION, values: [{ string: '2023-01-01' }] }]);

  const got = await svc(['dataset', 'get', '--urn', DATASET]);
  assert.equal(got.code, 0, got.stderr);
  const model = JSON.parse(got.stdout);
  assert.deepEqual(model.structured_properties, { [RETENTION]: [30, 365] });
  assert.deepEqual(model.schema.fields, [{ id: 'ip', urn: field, structured_properties: { [DEPRECATION]: ['2023-01-01'] } }]);
  assert.deepEqual(model.subtypes, ['Table']);
});

test('a value the server refuses: DataHub’s failure line, exit 1', async () => {
  const path = join(dir, 'refused.yaml');
  writeFileSync(path, `id: user.clicks\nplatform: hive\nstructured_properties:\n  io.acryl.privacy.retentionTime: 31\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`^Update failed for id ${DATASET.replace(/[().]/g, '\\$&')}\\. due to .*should be one of`));
});

test('unknown keys are named with their line; a missing dataset is DataHub’s line', async () => {
  const path = join(dir, 'unknown.yaml');
  writeFileSync(path, `- id: t\n  platform: hive\n  colour: red\n  schema:\n    fields:\n      - id: a\n        kind: x\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown\.yaml:3: unknown key "colour" in dataset 1/);
  assert.match(r.stderr, /unknown\.yaml:7: unknown key "kind" in field 1 of dataset 1/);
  const missing = await svc(['dataset', 'get', '--urn', 'urn:li:dataset:(urn:li:dataPlatform:hive,nothing,PROD)']);
  assert.deepEqual([missing.code, missing.stderr], [1, 'Dataset urn:li:dataset:(urn:li:dataPlatform:hive,nothing,PROD) does not exist\n']);
});
