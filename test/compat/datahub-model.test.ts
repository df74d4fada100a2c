/**
 * DataHub's whole model through DataHub's own SDK (each pinned `acryl-datahub` provision.sh installs),
 * on both search backends: every aspect of every entity type the SDK knows, built with its classes and
 * sent by its REST emitter in `ingestProposalBatch` (fixtures/every_aspect.py), is stored and read back
 * as sent on REST v3, REST v2 and Rest.li (`GET /aspects`, and `getTimeseriesAspectValues` for the time
 * series); the same proposals written to a file by the SDK go through `datahub ingest`'s file source and
 * datahub-rest sink, on a server of their own, and read back alike. A batch with one bad proposal fails whole, as DataHub's does (its batch is validated before
 * anything is written), and names the proposal: DataHub's own model never takes that path, as the first
 * test shows.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

/** What the script sent: each proposal's entity, aspect and value as the SDK serialised it. */
interface Sent {
  urn: string;
  entityType: string;
  aspect: string;
  timeseries: boolean;
  value: unknown;
}

/**
 * Aspects left out of the generated batch: their svc rules need other entities to exist (a property's
 * value names a defined property; a definition names existing data and entity types), which a value
 * made from the schema alone does not give. Their own suites write them as DataHub's clients do.
 */
const NEEDS_OTHER_ENTITIES = ['structuredProperties', 'propertyDefinition'];
/** The datasets fixtures/bad_batch.py writes to: a good proposal's, and the bad one's. */
const GOOD = 'urn:li:dataset:(urn:li:dataPlatform:hive,bad_batch.good,PROD)';
const OTHER = 'urn:li:dataset:(urn:li:dataPlatform:hive,bad_batch.other,PROD)';

/** Runs `work` over `items`, `width` at a time. */
async function eachLimited<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/**
 * Checks that every proposal the SDK made reads back as it was serialised, on REST v3, v2 and Rest.li
 * (`getTimeseriesAspectValues` for time series), and each entity with its key on `entitiesV2`.
 */
async function assertReadBack(s: TestServer, sent: Sent[]): Promise<void> {
  const get = async (path: string) => JSON.parse(await text(await s.request(path), 200));
  const entityTypes = new Set(sent.map((p) => p.entityType));
  const aspects = new Set(sent.map((p) => p.aspect));
  // The SDK's whole model: 0.14 gives its 56 entity types 141 aspects besides their keys, 1.7 its 72 more.
  assert.ok(entityTypes.size >= 50, `${entityTypes.size} entity types`);
  assert.ok(aspects.size >= 140, `${aspects.size} aspects`);
  const failures: string[] = [];
  await eachLimited(sent, 8, async (p) => {
    const where = `${p.entityType} ${p.aspect}`;
    try {
      const path = `/entity/${p.entityType}/${enc(p.urn)}/${p.aspect}`;
      const v3 = await get(`/openapi/v3${path}`);
      assert.deepEqual(v3[p.aspect].value, p.value, `${where}: REST v3`);
      const v2 = await get(`/openapi/v2${path}`);
      assert.deepEqual(v2.value, p.value, `${where}: REST v2`);
      if (p.timeseries) {
        const body = JSON.stringify({ urn: p.urn, entity: p.entityType, aspect: p.aspect, limit: 10 });
        const listed = JSON.parse(await text(await s.request('/aspects?action=getTimeseriesAspectValues', { method: 'POST', body }), 200));
        const values = listed.value.values.map((v: { aspect: { value: string } }) => JSON.parse(v.aspect.value));
        assert.deepEqual(values, [p.value], `${where}: getTimeseriesAspectValues gave ${JSON.stringify(values).slice(0, 400)}`);
      } else {
        const restli = await get(`/aspects/${enc(p.urn)}?aspect=${p.aspect}&version=0`);
        assert.deepEqual(Object.values(restli.aspect), [p.value], `${where}: Rest.li`);
      }
    } catch (err) {
      failures.push((err as Error).message.split('\n')[0]!);
    }
  });
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${sent.length} aspects did not read back`);
  // Each entity's key, built from its URN, is served with it (entitiesV2, as the SDK reads entities).
  const urns = [...new Set(sent.map((p) => p.urn))];
  const entities = await get(`/entitiesV2?ids=List(${urns.map(enc).join(',')})`);
  assert.deepEqual(Object.keys(entities.results).sort(), urns.sort());
}

for (const backend of searchBackends()) {
  for (const bin of datahubClientVersions()) {
    describe(`DataHub ${bin.version}'s model on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(bin, s);
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });

      test('every aspect of every entity type, sent by the SDK in ingestProposalBatch, reads back as sent on REST v3, v2 and Rest.li', async () => {
        const run = await client.python([join(FIXTURES, 'every_aspect.py'), NEEDS_OTHER_ENTITIES.join(',')]);
        assert.equal(run.code, 0, run.out.slice(-4_000));
        await assertReadBack(s, JSON.parse(run.out.trim().split('\n').pop()!) as Sent[]);
      });

      test('the same proposals in a file, through datahub ingest (file source, datahub-rest sink), read back as sent', async () => {
        const own = await startTestServer(backend.env);
        const fileClient = datahubClient(bin, own);
        try {
          const made = await fileClient.python([join(FIXTURES, 'every_aspect.py'), NEEDS_OTHER_ENTITIES.join(','), join(fileClient.dir, 'every_aspect.json')]);
          assert.equal(made.code, 0, made.out.slice(-4_000));
          const sent = JSON.parse(made.out.trim().split('\n').pop()!) as Sent[];
          writeFileSync(
            join(fileClient.dir, 'recipe.yaml'),
            'source:\n  type: file\n  config:\n    path: ./every_aspect.json\nsink:\n  type: datahub-rest\n  config:\n    server: ${DATAHUB_GMS_URL}\n    token: ${DATAHUB_GMS_TOKEN}\n',
          );
          const run = await fileClient.datahub(['ingest', '-c', 'recipe.yaml']);
          assert.equal(run.code, 0, run.out.slice(-4_000));
          assert.doesNotMatch(run.out, /failures': \[\{|Failed to/, run.out.slice(-4_000));
          await assertReadBack(own, sent);
        } finally {
          fileClient.cleanup();
          await own.close();
        }
      });

      test('a batch with one bad proposal is refused whole, naming it, with nothing written (as DataHub validates a batch before writing it)', async () => {
        for (const bad of ['unknownAspect', 'badValue', 'unknownEntityType']) {
          const run = await client.python([join(FIXTURES, 'bad_batch.py'), bad]);
          assert.notEqual(run.code, 0, run.out);
          const expected = {
            unknownAspect: /proposals\[1\].*notAnAspect/,
            badValue: /proposals\[1\].*datasetProperties/,
            unknownEntityType: /notAnEntity/,
          }[bad]!;
          assert.match(run.out, expected, run.out.slice(-2_000));
          // The good proposal before the bad one is not written either.
          for (const urn of [GOOD, OTHER]) assert.equal((await s.request(`/openapi/v3/entity/dataset/${enc(urn)}`)).status, 404, `${bad}: ${urn}`);
        }
      });
    });
  }
}
