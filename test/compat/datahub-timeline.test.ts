/**
 * `datahub timeline` (each pinned client version) against svc, on both search backends: a dataset's
 * aspects written one version after another through svc's REST API, then the CLI's timeline of its
 * tags, owners, documentation and technical schema (and, with 1.x, its domains and structured
 * properties) printed as the CLI prints it, one line per change, checked against what was written;
 * its `--verbose` JSON is svc's answer; a category svc does not compute is svc's 400 naming the
 * categories. And the 1.x SDK v2's entity calls (fixtures/sdk_v2_entities.py): a dataset upserted, read
 * back, changed and written again with `client.entities.update`, found with `client.search.get_urns`,
 * what it wrote read back through svc's REST API, and its changes in `datahub timeline`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { createProperty, propertyUrn } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,timeline.orders,PROD)';
const TIER = propertyUrn('io.svc.timeline.tier');

/** A schemaMetadata value with the given fields ([path, native type, DataHub type]). */
const schema = (...fields: [string, string, string][]) => ({
  schemaName: 'orders',
  platform: 'urn:li:dataPlatform:hive',
  version: 0,
  hash: '',
  platformSchema: { 'com.linkedin.schema.OtherSchema': { rawSchema: '' } },
  fields: fields.map(([fieldPath, nativeDataType, type]) => ({ fieldPath, nativeDataType, type: { type: { [`com.linkedin.schema.${type}`]: {} } }, nullable: false, recursive: false })),
});

/** The CLI's lines of a timeline: a transaction's `<date> - <semVer>`, then each change's `\t<operation> <category> <target> (<element>): <description>`. */
function parsed(out: string): { versions: string[]; changes: string[][] } {
  const versions: string[] = [];
  const changes: string[][] = [];
  for (const line of out.split('\n')) {
    const tx = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d - (\S+)$/.exec(line);
    if (tx) versions.push(tx[1]!);
    const change = /^\t(\S+) (\S+) (\S*) (?:\((.*)\))?: (.+)$/.exec(line);
    if (change) changes.push([change[1]!, change[2]!, change[3]!, change[4] ?? '']);
  }
  return { versions, changes };
}

/** The JSON `--verbose` prints after the endpoint's line: an array, indented, up to its closing line (warnings may follow on stderr). */
function printedJson(out: string): unknown {
  const lines = out.split('\n').slice(1);
  return JSON.parse(lines.slice(0, lines.indexOf(']') + 1).join('\n'));
}

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    const oneX = !version.version.startsWith('0.');
    describe(`datahub timeline ${version.version} on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      const write = async (urn: string, aspect: string, value: unknown) =>
        text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);

      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(version, s);
        await createProperty(s, 'io.svc.timeline.tier');
        await write(DATASET, 'schemaMetadata', schema(['id', 'int', 'NumberType'], ['amount', 'double', 'NumberType']));
        await write(DATASET, 'globalTags', { tags: [{ tag: 'urn:li:tag:pii' }] });
        await write(DATASET, 'ownership', { owners: [{ owner: 'urn:li:corpuser:alice', type: 'DATAOWNER' }] });
        await write(DATASET, 'glossaryTerms', { terms: [{ urn: 'urn:li:glossaryTerm:revenue' }], auditStamp: { time: 0, actor: 'urn:li:corpuser:alice' } });
        await write(DATASET, 'editableDatasetProperties', { description: 'Orders, one row each' });
        await write(DATASET, 'schemaMetadata', schema(['id', 'bigint', 'NumberType'], ['note', 'string', 'StringType']));
        await write(DATASET, 'globalTags', { tags: [{ tag: 'urn:li:tag:gold' }] });
        await write(DATASET, 'domains', { domains: ['urn:li:domain:sales'] });
        await write(DATASET, 'structuredProperties', { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] });
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });

      test('tags, owners, documentation and technical schema: one line per change, as written, oldest first', async () => {
        // 0.14's CLI takes OWNER (the name it sends), 1.x also OWNERSHIP.
        const run = await client.datahub(['timeline', '--urn', DATASET, '-c', 'tag', '-c', 'owner', '-c', 'glossary_term', '-c', 'documentation', '-c', 'technical_schema']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        const target = 'dataset:hive:timeline.orders';
        const { versions, changes } = parsed(run.out);
        assert.deepEqual(changes, [
          ['ADD', 'TECHNICAL_SCHEMA', target, 'field:amount'],
          ['ADD', 'TECHNICAL_SCHEMA', target, 'field:id'],
          ['ADD', 'TAG', target, 'urn:li:tag:pii'],
          ['ADD', 'OWNERSHIP', target, 'urn:li:corpuser:alice'],
          ['ADD', 'GLOSSARY_TERM', target, 'urn:li:glossaryTerm:revenue'],
          ['ADD', 'DOCUMENTATION', target, ''],
          ['REMOVE', 'TECHNICAL_SCHEMA', target, 'field:amount'],
          ['ADD', 'TECHNICAL_SCHEMA', target, 'field:note'],
          ['MODIFY', 'TECHNICAL_SCHEMA', target, 'field:id'],
          ['REMOVE', 'TAG', target, 'urn:li:tag:pii'],
          ['ADD', 'TAG', target, 'urn:li:tag:gold'],
        ]);
        // Each write one transaction: the first 0.0.0, the fields removed and retyped a major change.
        assert.deepEqual(versions, ['0.0.0-computed', '0.1.0-computed', '0.2.0-computed', '0.3.0-computed', '0.4.0-computed', '1.0.0-computed', '1.1.0-computed']);
        assert.match(run.out, /description set to "Orders, one row each"/);
      });

      test('--verbose prints svc\'s answer as JSON: the change transactions of the endpoint the CLI names; --raw adds their JSON Patch', async () => {
        const run = await client.datahub(['timeline', '--urn', DATASET, '-c', 'TAG', '--verbose']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        const endpoint = run.out.split('\n')[0];
        assert.match(endpoint!, /\/openapi\/v2\/timeline\/v1\/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Ahive%2Ctimeline\.orders%2CPROD%29\?categories=TAG$/);
        const printed = printedJson(run.out) as { changeEvents: { modifier: string; operation: string }[] }[];
        const answered = JSON.parse(await text(await s.request(endpoint!.slice(s.url.length)), 200));
        assert.deepEqual(printed, answered);
        assert.deepEqual(printed.flatMap((t) => t.changeEvents.map((e) => [e.operation, e.modifier])), [['ADD', 'urn:li:tag:pii'], ['REMOVE', 'urn:li:tag:pii'], ['ADD', 'urn:li:tag:gold']]);
        const raw = await client.datahub(['timeline', '--urn', DATASET, '-c', 'TAG', '--verbose', '--raw']);
        assert.equal(raw.code, 0, raw.out.slice(-3_000));
        const diffs = (printedJson(raw.out) as { rawDiff: unknown }[]).map((t) => t.rawDiff);
        assert.deepEqual(diffs[0], [{ op: 'replace', path: '/globalTags', value: { tags: [{ tag: 'urn:li:tag:pii' }] } }]);
        assert.deepEqual(diffs[1], [{ op: 'replace', path: '/globalTags/tags/0/tag', value: 'urn:li:tag:gold' }]);
      });

      // 0.14's CLI takes only its five categories; 1.x's also DOMAIN, STRUCTURED_PROPERTY and others.
      if (oneX) test('1.x: domains and structured properties; a category svc does not compute is its 400 naming the categories', async () => {
        const run = await client.datahub(['timeline', '--urn', DATASET, '-c', 'domain', '-c', 'structured_property']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        assert.deepEqual(parsed(run.out).changes, [
          ['ADD', 'DOMAIN', 'dataset:hive:timeline.orders', 'urn:li:domain:sales'],
          ['ADD', 'STRUCTURED_PROPERTY', 'dataset:hive:timeline.orders', TIER],
        ]);
        const refused = await client.datahub(['timeline', '--urn', DATASET, '-c', 'versioning']);
        assert.match(refused.out, /"status": 400/, refused.out.slice(-3_000));
        assert.match(refused.out, /unknown category \\+"VERSIONING\\+"; the categories are TAG, GLOSSARY_TERM, OWNERSHIP/, refused.out.slice(-3_000));
      });

      // 0.14 has no SDK v2.
      if (oneX) test('1.x SDK v2: entities.upsert, get, update and search.get_urns read back through svc, and the changes in datahub timeline', async () => {
        const run = await client.python([join(FIXTURES, 'sdk_v2_entities.py'), 'postgres', 'sdk.orders']);
        assert.equal(run.code, 0, run.out.slice(-3_000));
        const urn = 'urn:li:dataset:(urn:li:dataPlatform:postgres,sdk.orders,PROD)';
        assert.deepEqual(JSON.parse(run.out.split('\n').findLast((l) => l.startsWith('{"urn"'))!), {
          urn,
          read: { description: 'first', tags: ['urn:li:tag:pii'], owners: ['urn:li:corpuser:alice'], fields: ['id', 'amount'] },
          updated: { description: 'second', tags: ['urn:li:tag:gold', 'urn:li:tag:pii'], owners: ['urn:li:corpuser:alice'], fields: ['id', 'amount'] },
          found: [urn],
        });
        const aspect = async (name: string) => JSON.parse(await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/${name}`), 200))[name].value;
        // Outside an ingestion the SDK writes a description into editableDatasetProperties.
        assert.equal((await aspect('editableDatasetProperties')).description, 'second');
        assert.deepEqual((await aspect('globalTags')).tags.map((t: { tag: string }) => t.tag).sort(), ['urn:li:tag:gold', 'urn:li:tag:pii']);
        assert.deepEqual((await aspect('ownership')).owners.map((o: { owner: string }) => o.owner), ['urn:li:corpuser:alice']);
        assert.deepEqual((await aspect('schemaMetadata')).fields.map((f: { fieldPath: string }) => f.fieldPath), ['id', 'amount']);
        const timeline = await client.datahub(['timeline', '--urn', urn, '-c', 'tag', '-c', 'documentation']);
        assert.equal(timeline.code, 0, timeline.out.slice(-3_000));
        const target = 'dataset:postgres:sdk.orders';
        assert.deepEqual(parsed(timeline.out).changes.sort(), [
          ['ADD', 'DOCUMENTATION', target, ''],
          ['ADD', 'TAG', target, 'urn:li:tag:gold'],
          ['ADD', 'TAG', target, 'urn:li:tag:pii'],
          ['MODIFY', 'DOCUMENTATION', target, ''],
        ]);
        assert.match(timeline.out, /description changed to "second"/);
      });
    });
  }
}
