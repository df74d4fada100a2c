/**
 * DataHub's Rest.li `POST /entities?action=search`, on both search backends: a page of the entities of
 * one type matching the input and a filter, and how many match in all. DataHub's clients find a domain
 * by its name so (`DataHubGraph.get_domain_urn_by_name`, behind a glossary term's or a source's
 * `domain: Marketing`; 0.14 sends the criterion's `value`, 1.x its `values`), and containers by a
 * custom property and a sub type; it was a 400 ("expected one of delete, deleteReferences"), which
 * failed the whole ingestion. Malformed bodies are refused, every problem named.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectRejected } from '../support/expectRejected.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

for (const backend of searchBackends()) {
  describe(`POST /entities?action=search on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(backend.env);
      for (const [id, name] of [
        ['marketing', 'Marketing'],
        ['finance', 'Finance'],
        ['finance-emea', 'Finance EMEA'],
      ]) {
        await text(await s.request(`/openapi/v3/entity/domain/${enc(`urn:li:domain:${id}`)}/domainProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { name } }) }), 200);
      }
      await text(await s.request(`/openapi/v3/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,marketing,PROD)')}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: '{"value":{"name":"Marketing"}}' }), 200);
      await s.svc.catalog.searchOutbox.deliverAll();
    });
    after(async () => {
      await s.close();
    });

    const search = (body: unknown) => s.request('/entities?action=search', { method: 'POST', body: JSON.stringify(body) });
    const byName = (name: string, criterion: Record<string, unknown>) => ({ input: '*', entity: 'domain', start: 0, count: 10, filter: { or: [{ and: [{ field: 'name', condition: 'EQUAL', ...criterion }] }] } });

    test('a domain by its name, as both client lines ask for it: that domain alone, of that entity type', async () => {
      for (const criterion of [{ values: ['Marketing'] }, { value: 'Marketing' }]) {
        const res = JSON.parse(await text(await search(byName('Marketing', criterion)), 200));
        assert.deepEqual(res, { value: { from: 0, pageSize: 10, numEntities: 1, entities: [{ entity: 'urn:li:domain:marketing', matchedFields: [] }], metadata: { aggregations: [] } } });
      }
      const none = JSON.parse(await text(await search(byName('Sales', { values: ['Sales'] })), 200));
      assert.deepEqual(none.value.entities, []);
      assert.equal(none.value.numEntities, 0);
    });

    test('without a filter: every entity of the type, a page at a time, with the number that match', async () => {
      const first = JSON.parse(await text(await search({ input: '*', entity: 'domain', start: 0, count: 2 }), 200));
      assert.equal(first.value.numEntities, 3);
      assert.deepEqual(first.value.entities.map((e: { entity: string }) => e.entity), ['urn:li:domain:finance', 'urn:li:domain:finance-emea']);
      const second = JSON.parse(await text(await search({ input: '*', entity: 'domain', start: 2, count: 2 }), 200));
      assert.deepEqual(second.value.entities.map((e: { entity: string }) => e.entity), ['urn:li:domain:marketing']);
      assert.equal(second.value.from, 2);
    });

    test('containers by a custom property and a sub type, as the clients\' get_container_urns_by_filter asks for them', async () => {
      const container = (id: string) => `urn:li:container:${id}`;
      for (const [id, instance, type] of [
        ['db-prod', 'PROD', 'Database'],
        ['schema-prod', 'PROD', 'Schema'],
        ['db-dev', 'DEV', 'Database'],
      ] as const) {
        await text(await s.request(`/openapi/v3/entity/container/${enc(container(id))}/containerProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { name: id, customProperties: { instance } } }) }), 200);
        await text(await s.request(`/openapi/v3/entity/container/${enc(container(id))}/subTypes?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { typeNames: [type] } }) }), 200);
      }
      await s.svc.catalog.searchOutbox.deliverAll();
      const or = ['Database', 'Schema'].map((type) => ({ and: [{ field: 'customProperties', values: ['instance=PROD'], condition: 'EQUAL' }, { field: 'typeNames', values: [type], condition: 'EQUAL' }] }));
      const res = JSON.parse(await text(await search({ input: '*', entity: 'container', start: 0, count: 100, filter: { or } }), 200));
      assert.deepEqual(res.value.entities.map((e: { entity: string }) => e.entity), [container('db-prod'), container('schema-prod')]);
    });

    /** A Rest.li refusal (`{"message", "status"}`) whose message matches each of `expected`; nothing changed. */
    const refused = (body: unknown, ...expected: RegExp[]) =>
      expectRejected(s, () => search(body), 400, (raw) => {
        const { message, status } = JSON.parse(raw) as { message: string; status: number };
        assert.equal(status, 400);
        for (const e of expected) assert.match(message, e);
      });

    test('malformed bodies are refused, every problem named', async () => {
      await refused({ entity: 'domain', count: 'ten', colour: 1 }, /Parameter 'input' is required/, /Parameter 'count' is required: an integer/, /Parameter 'colour' is not a parameter of search/);
      await refused({ input: '*', entity: 'domain', count: 1, filter: { or: [{ and: [{ field: 'name', values: 'Marketing', colour: 1 }] }] } }, /filter\.or\[0\]\.and\[0\]\.colour is not a criterion's field/, /filter\.or\[0\]\.and\[0\]\.values must be a list of strings/);
      await refused({ input: '*', entity: 'nothing', count: 1 }, /Unknown entity type "nothing"/);
      await refused({ input: '*', entity: 'domain', count: 1, searchFlags: { skipCache: true } }, /searchFlags\.skipCache is not a flag svc acts on/);
    });
  });
}
