/**
 * `svc dataset upsert` and `svc dataset get`, run as a child process against a started server: the
 * seed's dataset with dataset-level and field-level structured properties (written on the field's
 * schemaField URN), what REST reads back, a refused value, unknown keys and a missing dataset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runSvc } from '../support/cli.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
let dir: string;

const svc = (args: string[]) => runSvc(s.url, args, { SVC_ENV_FILE: join(dir, 'none') });

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
  // Doubles as every read writes them, numbers still, in the JSON and in the YAML of --to-file.
  assert.match(got.stdout, /\[\s*30\.0,\s*365\.0\s*\]/, got.stdout);
  const yamlPath = join(dir, 'got.yaml');
  assert.equal((await svc(['dataset', 'get', '--urn', DATASET, '--to-file', yamlPath])).code, 0);
  const yamlText = readFileSync(yamlPath, 'utf8');
  assert.match(yamlText, /- 30\.0\n\s*- 365\.0\n/, yamlText);
  assert.deepEqual((parseYaml(yamlText) as { structured_properties: unknown }).structured_properties, { [RETENTION]: [30, 365] });
  const json = await svc(['dataset', 'get', '--urn', DATASET, '--json']);
  assert.match(json.stdout, /365\.0/);
  assert.deepEqual(model.schema.fields, [{ id: 'ip', urn: field, structured_properties: { [DEPRECATION]: ['2023-01-01'] } }]);
  assert.deepEqual(model.subtypes, ['Table']);
});

test('a value the server refuses: DataHub’s failure line, exit 1', async () => {
  const path = join(dir, 'refused.yaml');
  writeFileSync(path, `id: user.clicks\nplatform: hive\nstructured_properties:\n  io.acryl.privacy.retentionTime: 31\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`^Update failed for id ${DATASET.replace(/[().]/g, '\\$&')}\\. due to .*should be one of`));
  // As DataHub's CLI, the datasets after a refused one are still written; the exit code says one failed.
  const both = join(dir, 'refused-then-fine.yaml');
  writeFileSync(both, `- id: refused.first\n  platform: hive\n  structured_properties:\n    io.acryl.privacy.retentionTime: 31\n- id: fine.second\n  platform: hive\n  structured_properties:\n    io.acryl.privacy.retentionTime: 30\n`);
  const second = 'urn:li:dataset:(urn:li:dataPlatform:hive,fine.second,PROD)';
  const mixed = await svc(['dataset', 'upsert', '-f', both]);
  assert.equal(mixed.code, 1);
  assert.equal(mixed.stdout, `Update succeeded for urn ${second}.\n`);
  assert.match(mixed.stderr, /^Update failed for id urn:li:dataset:\(urn:li:dataPlatform:hive,refused\.first,PROD\)\. due to .*should be one of.*\n1 of 2 datasets not written\n$/s);
  const written = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(second)}/structuredProperties`), 200));
  assert.deepEqual(written.structuredProperties.value.properties, [{ propertyUrn: RETENTION, values: [{ double: 30 }] }]);
  // A dataset whose own aspects were written before a later step was refused (a field's value of a
  // property that does not apply to fields) is said to be written in part, and which.
  const partly = join(dir, 'refused-in-part.yaml');
  writeFileSync(partly, `${readFileSync(both, 'utf8')}- id: part.third
  platform: hive
  structured_properties:
    io.acryl.privacy.retentionTime: 30
  schema:
    fields:
      - id: a
        structured_properties:
          io.acryl.privacy.retentionTime: 30
`);
  const third = 'urn:li:dataset:(urn:li:dataPlatform:hive,part.third,PROD)';
  const inPart = await svc(['dataset', 'upsert', '-f', partly]);
  assert.equal(inPart.code, 1);
  assert.match(inPart.stderr, /cannot be applied to entity type urn:li:entityType:svc\.schemaField/);
  assert.ok(
    inPart.stderr.endsWith(`1 of 3 datasets not written; 1 of 3 datasets written in part (the dataset's own aspects, not all of its fields' values and downstreams): ${third}\n`),
    inPart.stderr,
  );
  const own = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(third)}/structuredProperties`), 200));
  assert.deepEqual(own.structuredProperties.value.properties, [{ propertyUrn: RETENTION, values: [{ double: 30 }] }]);
});

test('a value that is a mapping, a list in a list or nothing is a usage error naming its line; nothing is written', async () => {
  const path = join(dir, 'shapes.yaml');
  writeFileSync(path, `id: shapes\nplatform: hive\nstructured_properties:\n  io.acryl.privacy.retentionTime: {a: 1}\n  io.acryl.dataManagement.deprecationDate:\n  other.one: [[1]]\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /shapes\.yaml:3: dataset 1: io\.acryl\.privacy\.retentionTime must be a value \(a number or a string\) or a list of values, got a mapping/);
  assert.match(r.stderr, /dataset 1: io\.acryl\.dataManagement\.deprecationDate must be a value .* got nothing/);
  assert.match(r.stderr, /dataset 1: other\.one must be a value .* got a list in a list/);
  await text(await s.request(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,shapes,PROD)')}`), 404);
});

test('unknown keys are named with their line; a missing dataset is DataHub’s line; a --to-file that cannot be written is one line, exit 2', async () => {
  const path = join(dir, 'unknown.yaml');
  writeFileSync(path, `- id: t\n  platform: hive\n  colour: red\n  schema:\n    fields:\n      - id: a\n        kind: x\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown\.yaml:3: unknown key "colour" in dataset 1/);
  assert.match(r.stderr, /unknown\.yaml:7: unknown key "kind" in field 1 of dataset 1/);
  const toDir = await svc(['dataset', 'get', '--urn', DATASET, '--to-file', dir]);
  assert.deepEqual([toDir.code, toDir.stderr], [2, `Cannot write ${dir}: it is a directory\n`]);
  const missing = await svc(['dataset', 'get', '--urn', 'urn:li:dataset:(urn:li:dataPlatform:hive,nothing,PROD)']);
  assert.deepEqual([missing.code, missing.stderr], [1, 'Dataset urn:li:dataset:(urn:li:dataPlatform:hive,nothing,PROD) does not exist\n']);
});

test('a problem is named with the line of its key, not the dataset’s first line', async () => {
  const path = join(dir, 'lines.yaml');
  writeFileSync(path, `- id: t2\n  platform: hive\n  downstreams: x\n  schema:\n    fields:\n      - id: a\n      - id: b\n        structured_properties: [1]\n- id: t3\n  urn: nope\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /lines\.yaml:3: dataset 1: downstreams must be a list/);
  assert.match(r.stderr, /lines\.yaml:8: field b of dataset 1: structured_properties must be a mapping/);
  assert.match(r.stderr, /lines\.yaml:10: dataset 2: nope is not a dataset URN/);
  // A downstream that is no dataset URN is found before anything is written (it was refused after the dataset's own aspects).
  const bad = join(dir, 'downstream.yaml');
  writeFileSync(bad, `- id: t7\n  platform: hive\n  downstreams:\n    - t8\n    - "urn:li:dataset:(x"\n`);
  const d = await svc(['dataset', 'upsert', '-f', bad]);
  assert.equal(d.code, 2);
  assert.match(d.stderr, /downstream\.yaml:5: dataset 1: downstreams\[1\] urn:li:dataset:\(x is not a dataset URN: /);
  await text(await s.request(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,t7,PROD)')}`), 404);
});

test('a key of the wrong shape is a problem with its line, not a crash', async () => {
  const path = join(dir, 'shapes.yaml');
  writeFileSync(path, `- id: t4\n  platform: hive\n  subtypes: Table\n  properties: [1]\n  schema:\n    fields:\n      -\n      - description: no id\n- id: t5\n  platform: hive\n  schema:\n    fields: x\n- id: t6\n  platform: hive\n  schema: x\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(r.stderr.trim().split('\n').sort(), [
    `${path}:12: dataset 2: schema.fields must be a list of fields (- id: …)`,
    `${path}:15: dataset 3: schema must be a mapping (file, fields)`,
    `${path}:3: dataset 1: subtypes must be a list (or give one as subtype)`,
    `${path}:4: dataset 1: properties must be a mapping of names to values`,
    `${path}:7: field 1 of dataset 1 must be a mapping of keys (id, structured_properties, …)`,
    `${path}:8: field 2 of dataset 1: id or urn is required`,
  ]);
});

test('schema.file (Avro) becomes schemaMetadata, amended by schema.fields; downstreams get the dataset as an upstream, once', async () => {
  const avsc = {
    type: 'record',
    name: 'Order',
    namespace: 'shop',
    fields: [
      { name: 'id', type: 'long', doc: 'the order id' },
      { name: 'customer', type: { type: 'record', name: 'Customer', fields: [{ name: 'email', type: ['null', 'string'], default: null }] } },
      { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
      { name: 'items', type: { type: 'array', items: 'string' } },
      { name: 'placed_at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    ],
  };
  writeFileSync(join(dir, 'order.avsc'), JSON.stringify(avsc));
  const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders,PROD)';
  const DAILY = 'urn:li:dataset:(urn:li:dataPlatform:hive,shop.orders_daily,PROD)';
  const AUDIT = 'urn:li:dataset:(urn:li:dataPlatform:kafka,audit,PROD)';
  // The audit dataset has an upstream already: the patch adds to it.
  await text(
    await s.request(`/openapi/v3/entity/dataset/${enc(AUDIT)}/upstreamLineage?createIfNotExists=false`, {
      method: 'POST',
      body: JSON.stringify({ value: { upstreams: [{ dataset: DATASET, type: 'TRANSFORMED' }] } }),
    }),
    200,
  );
  const path = join(dir, 'orders.yaml');
  writeFileSync(
    path,
    `id: shop.orders
platform: hive
schema:
  file: order.avsc
  fields:
    - id: customer.email
      description: where the receipt goes
      structured_properties:
        io.acryl.dataManagement.deprecationDate: "2030-01-01"
downstreams:
  - shop.orders_daily
  - ${AUDIT}
`,
  );
  for (let run = 0; run < 2; run++) {
    const r = await svc(['dataset', 'upsert', '-f', path]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Update succeeded for urn ${ORDERS}.\n`);
  }
  const schema = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(ORDERS)}/schemaMetadata`), 200)).schemaMetadata.value;
  assert.equal(schema.schemaName, 'shop.Order');
  assert.equal(schema.platform, 'urn:li:dataPlatform:hive');
  assert.deepEqual(JSON.parse(schema.platformSchema['com.linkedin.schema.OtherSchema'].rawSchema), avsc);
  assert.deepEqual(
    schema.fields.map((f: { fieldPath: string; nativeDataType: string; nullable: boolean; description?: string; type: { type: object } }) => [f.fieldPath, f.nativeDataType, Object.keys(f.type.type)[0], f.nullable, f.description]),
    [
      ['id', 'long', 'com.linkedin.schema.NumberType', false, 'the order id'],
      ['customer', 'shop.Customer', 'com.linkedin.schema.RecordType', false, undefined],
      ['customer.email', 'string', 'com.linkedin.schema.StringType', true, 'where the receipt goes'],
      ['status', 'shop.Status', 'com.linkedin.schema.EnumType', false, undefined],
      ['items', 'array<string>', 'com.linkedin.schema.ArrayType', false, undefined],
      ['placed_at', 'timestamp-millis', 'com.linkedin.schema.TimeType', false, undefined],
    ],
  );
  const upstreams = async (urn: string) => JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/upstreamLineage`), 200)).upstreamLineage.value.upstreams.map((u: { dataset: string; type: string }) => [u.dataset, u.type]);
  assert.deepEqual(await upstreams(DAILY), [[ORDERS, 'COPY']], 'a name on the same platform and env; added once in two runs');
  assert.deepEqual(await upstreams(AUDIT), [[DATASET, 'TRANSFORMED'], [ORDERS, 'COPY']], 'the other upstream stays');

  const got = JSON.parse((await svc(['dataset', 'get', '--urn', ORDERS])).stdout);
  assert.deepEqual(got.schema.fields.find((f: { id: string }) => f.id === 'customer.email'), {
    id: 'customer.email',
    type: 'string',
    description: 'where the receipt goes',
    urn: `urn:li:schemaField:(${ORDERS},customer.email)`,
    structured_properties: { [DEPRECATION]: ['2030-01-01'] },
  });
  assert.equal(got.schema.fields.length, 6);
  assert.deepEqual(JSON.parse((await svc(['dataset', 'get', '--urn', DAILY])).stdout).upstreams, [ORDERS]);
});

test('a schema.file that is missing or not Avro is named with its line, and nothing is written', async () => {
  writeFileSync(join(dir, 'bad.avsc'), JSON.stringify({ type: 'record', name: 'Bad', fields: [{ name: 'x', type: 'strin' }] }));
  const path = join(dir, 'bad-schema.yaml');
  writeFileSync(path, `- id: shop.bad\n  platform: hive\n  schema:\n    file: bad.avsc\n- id: shop.missing\n  platform: hive\n  schema:\n    file: nowhere.avsc\n    format: avro\n`);
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /bad-schema\.yaml:4: schema\.file bad\.avsc \(read at .*\/bad\.avsc, relative to the YAML file\): .*strin/);
  // Where it was looked for is said: DataHub's CLI reads the path from the current directory.
  assert.ok(r.stderr.includes(`bad-schema.yaml:8: schema.file nowhere.avsc (read at ${join(dir, 'nowhere.avsc')}, relative to the YAML file): no such file`), r.stderr);
  assert.match(r.stderr, /bad-schema\.yaml:9: unknown key "format" in schema of dataset 2/);
  assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,shop.bad,PROD)')}`)).status, 404);
});

test('a field’s description or type with no Avro field to amend is written nowhere, and says so', async () => {
  writeFileSync(join(dir, 'small.avsc'), JSON.stringify({ type: 'record', name: 'Small', fields: [{ name: 'a', type: 'int' }] }));
  const path = join(dir, 'amends.yaml');
  writeFileSync(
    path,
    `- id: shop.noschema\n  platform: hive\n  schema:\n    fields:\n      - id: a\n        description: the a\n- id: shop.small\n  platform: hive\n  schema:\n    file: small.avsc\n    fields:\n      - id: a\n        description: kept\n      - id: b\n        type: int\n        description: dropped\n`,
  );
  const r = await svc(['dataset', 'upsert', '-f', path]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stderr,
    `${path}:6: field a of dataset 1: description not written: there is no schema.file to amend\n` + `${path}:15: field b of dataset 2: description and type not written: schema.file small.avsc has no field b\n`,
  );
  const small = JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,shop.small,PROD)')}/schemaMetadata`), 200)).schemaMetadata.value;
  assert.deepEqual(small.fields.map((f: { fieldPath: string; description?: string }) => [f.fieldPath, f.description]), [['a', 'kept']]);
});
