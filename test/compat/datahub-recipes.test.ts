/**
 * DataHub users' recipes, run unchanged through DataHub's own `datahub ingest` (each pinned version)
 * with the `datahub-rest` sink pointed at svc, on both search backends: the sources that ship with the
 * base `acryl-datahub` package and write the metadata people keep by hand (fixtures/recipes):
 * `datahub-business-glossary` (a glossary file; a domain named by its name is looked up with Rest.li's
 * search), `csv-enricher` (a CSV of terms, tags, owners, descriptions, domains and, from 1.x,
 * structured properties for existing datasets) and `datahub-lineage-file` (a lineage file with
 * column-level lineage). The last two read what the datasets have from svc first and keep it, so each
 * test writes something beforehand and checks it is still there. What each run wrote is read back
 * through svc's own REST API.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { datahubClient, datahubClientVersions, FIXTURES } from '../support/datahubClient.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { createProperty } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

const RECIPES = join(FIXTURES, 'recipes');
const hive = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const ORDERS = hive('sales.orders');
const CUSTOMERS = hive('sales.customers');
const ORDERS_DAILY = hive('sales.orders_daily');
const term = (id: string) => `urn:li:glossaryTerm:${id}`;
const node = (id: string) => `urn:li:glossaryNode:${id}`;

/** Owners as DataHub's clients compare them: who, and of which type. */
const owners = (ownership: { owners: { owner: string; type: string; typeUrn?: string }[] }) =>
  ownership.owners.map(({ owner, type, typeUrn }) => (typeUrn ? { owner, type, typeUrn } : { owner, type }));

for (const backend of searchBackends()) {
  for (const version of datahubClientVersions()) {
    describe(`DataHub ${version.version}'s recipes on svc (${backend.name})`, () => {
      let s: TestServer;
      let client: ReturnType<typeof datahubClient>;
      before(async () => {
        s = await startTestServer(backend.env);
        client = datahubClient(version, s);
        for (const f of readdirSync(RECIPES)) copyFileSync(join(RECIPES, f), join(client.dir, f));
      });
      after(async () => {
        await s?.close();
        client?.cleanup();
      });
      /** An entity's aspects (latest values), by name. */
      const entity = async (type: string, urn: string) => {
        const body = JSON.parse(await text(await s.request(`/openapi/v3/entity/${type}/${enc(urn)}`), 200));
        return Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'urn').map(([k, v]) => [k, (v as { value: unknown }).value])) as Record<string, any>;
      };
      const write = async (type: string, urn: string, aspect: string, value: unknown) =>
        text(await s.request(`/openapi/v3/entity/${type}/${enc(urn)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
      const ingest = async (recipe: string) => {
        const run = await client.datahub(['ingest', '-c', recipe]);
        assert.equal(run.code, 0, run.out.slice(-6_000));
        assert.doesNotMatch(run.out, /failures': \[\{|Failed to/, run.out.slice(-6_000));
        return run;
      };

      test('datahub-business-glossary: nodes, terms, their related terms, owners, links and domains are stored as the file says', async () => {
        // A domain the file names by its name: the source finds its URN with a Rest.li search.
        await write('domain', 'urn:li:domain:mkt', 'domainProperties', { name: 'Marketing' });
        await s.svc.catalog.searchOutbox.deliverAll();
        await ingest('glossary.yaml');

        const classification = await entity('glossaryNode', node('Classification'));
        assert.deepEqual(classification.glossaryNodeInfo, { definition: 'A set of terms related to data classification', name: 'Classification', customProperties: {} });
        assert.deepEqual(owners(classification.ownership), [
          { owner: 'urn:li:corpuser:alice', type: 'DATAOWNER' },
          { owner: 'urn:li:corpGroup:privacy', type: 'DATAOWNER' },
        ]);
        assert.deepEqual(
          classification.institutionalMemory.elements.map((e: { url: string; description: string }) => [e.url, e.description]),
          [['https://example.com/policy', 'The classification policy']],
        );
        const finance = await entity('glossaryNode', node('finance'));
        assert.deepEqual(finance.glossaryNodeInfo, { definition: 'Terms of the finance domain', name: 'Finance', customProperties: {} });
        assert.deepEqual(owners(finance.ownership), [{ owner: 'urn:li:corpuser:mjames', type: 'DEVELOPER' }]);
        const revenue = await entity('glossaryNode', node('Finance.Revenue'));
        assert.deepEqual(revenue.glossaryNodeInfo, { definition: 'Revenue and how it is reported', name: 'Revenue', parentNode: node('finance'), customProperties: {} });

        // A term takes the file's source and URL unless it names its own, and its node's owners.
        const sensitive = await entity('glossaryTerm', term('Classification.Sensitive'));
        assert.deepEqual(sensitive.glossaryTermInfo, {
          definition: 'Sensitive data',
          name: 'Sensitive',
          termSource: 'INTERNAL',
          sourceRef: 'DataHub',
          sourceUrl: 'https://example.com/glossary',
          parentNode: node('Classification'),
          customProperties: { is_confidential: 'false' },
        });
        assert.deepEqual(owners(sensitive.ownership), owners(classification.ownership));
        const confidential = await entity('glossaryTerm', term('Classification.Confidential'));
        assert.deepEqual(confidential.glossaryRelatedTerms, { relatedTerms: [term('Classification.Sensitive')] });
        assert.deepEqual(confidential.glossaryTermInfo.customProperties, { is_confidential: 'true' });
        const gross = await entity('glossaryTerm', term('finance.gross_revenue'));
        assert.deepEqual(gross.glossaryTermInfo, {
          definition: 'Revenue before deductions',
          name: 'Gross Revenue',
          termSource: 'EXTERNAL',
          sourceRef: 'FIBO',
          sourceUrl: 'https://spec.edmcouncil.org/fibo/',
          parentNode: node('Finance.Revenue'),
          customProperties: {},
        });
        assert.deepEqual(gross.glossaryRelatedTerms, { isRelatedTerms: [term('Classification.Confidential')] });
        assert.deepEqual(gross.domains, { domains: ['urn:li:domain:finance'] });
        const account = await entity('glossaryTerm', term('account'));
        assert.equal(account.glossaryTermInfo.parentNode, undefined);
        assert.deepEqual(account.glossaryRelatedTerms, { hasRelatedTerms: [term('Classification.Sensitive'), term('finance.gross_revenue')] });
        assert.deepEqual(owners(account.ownership), [{ owner: 'urn:li:corpuser:bob', type: 'CUSTOM', typeUrn: 'urn:li:ownershipType:steward' }]);
        assert.deepEqual(account.domains, { domains: ['urn:li:domain:mkt'] });
      });

      test('csv-enricher: terms, tags, owners, descriptions and a domain added to datasets, what they had kept (PATCH), or replaced (OVERRIDE)', async () => {
        await write('dataset', ORDERS, 'globalTags', { tags: [{ tag: 'urn:li:tag:existing' }] });
        await write('dataset', ORDERS, 'ownership', { owners: [{ owner: 'urn:li:corpuser:erin', type: 'DATAOWNER' }] });
        await write('dataset', ORDERS, 'editableDatasetProperties', { description: 'to be replaced' });
        await ingest('enrich.yaml');

        const orders = await entity('dataset', ORDERS);
        assert.deepEqual(orders.globalTags.tags.map((t: { tag: string }) => t.tag), ['urn:li:tag:existing', 'urn:li:tag:pii']);
        assert.deepEqual(owners(orders.ownership), [
          { owner: 'urn:li:corpuser:erin', type: 'DATAOWNER' },
          { owner: 'urn:li:corpuser:carol', type: 'DATAOWNER' },
        ]);
        assert.deepEqual(orders.glossaryTerms.terms.map((t: { urn: string }) => t.urn), [term('account'), term('Classification.Sensitive')]);
        assert.equal(orders.editableDatasetProperties.description, 'Every order a customer placed');
        assert.deepEqual(orders.domains, { domains: ['urn:li:domain:finance'] });
        // The column's row: the dataset's editableSchemaMetadata.
        const [amount, ...others] = orders.editableSchemaMetadata.editableSchemaFieldInfo;
        assert.deepEqual(others, []);
        assert.equal(amount.fieldPath, 'amount');
        assert.equal(amount.description, "The order's total");
        assert.deepEqual(amount.glossaryTerms.terms.map((t: { urn: string }) => t.urn), [term('Classification.Confidential')]);
        assert.deepEqual(amount.globalTags.tags.map((t: { tag: string }) => t.tag), ['urn:li:tag:money']);

        const customers = await entity('dataset', CUSTOMERS);
        assert.deepEqual(customers.globalTags.tags.map((t: { tag: string }) => t.tag), ['urn:li:tag:pii', 'urn:li:tag:gold']);
        assert.deepEqual(owners(customers.ownership), [
          { owner: 'urn:li:corpuser:dave', type: 'TECHNICAL_OWNER' },
          { owner: 'urn:li:corpGroup:sales', type: 'TECHNICAL_OWNER' },
        ]);
        assert.equal(customers.editableDatasetProperties.description, 'Who buys');

        // Run again: nothing is added twice.
        await ingest('enrich.yaml');
        const again = await entity('dataset', ORDERS);
        assert.deepEqual(again.globalTags, orders.globalTags);
        assert.deepEqual(owners(again.ownership), owners(orders.ownership));
        assert.deepEqual(again.glossaryTerms.terms.map((t: { urn: string }) => t.urn), [term('account'), term('Classification.Sensitive')]);

        // OVERRIDE: the CSV's tags and owners replace what the dataset had.
        await ingest('enrich-override.yaml');
        const overridden = await entity('dataset', ORDERS);
        assert.deepEqual(overridden.globalTags.tags.map((t: { tag: string }) => t.tag), ['urn:li:tag:pii']);
        assert.deepEqual(owners(overridden.ownership), [{ owner: 'urn:li:corpuser:carol', type: 'DATAOWNER' }]);
      });

      // The 0.14 csv-enricher has no structured_properties option.
      if (!version.version.startsWith('0.')) test(
        'csv-enricher with structured_properties: a column\'s values set as a structured property, the values the dataset had kept',
        async () => {
          const tier = await createProperty(s, 'io.svc.tier');
          const retention = await createProperty(s, 'io.svc.retention', { valueType: 'urn:li:dataType:svc.number' });
          await write('dataset', ORDERS, 'structuredProperties', { properties: [{ propertyUrn: retention, values: [{ double: 60 }] }] });
          await ingest('enrich-properties.yaml');
          assert.deepEqual((await entity('dataset', ORDERS)).structuredProperties.properties, [
            { propertyUrn: retention, values: [{ double: 60 }] },
            { propertyUrn: tier, values: [{ string: 'gold' }] },
          ]);
          assert.deepEqual((await entity('dataset', hive('sales.refunds'))).structuredProperties.properties, [{ propertyUrn: tier, values: [{ string: 'silver' }] }]);
        },
      );

      test('datahub-lineage-file: upstreams and column-level lineage, the upstreams a dataset had kept', async () => {
        const rawOrders = hive('sales.raw_orders');
        await write('dataset', ORDERS_DAILY, 'upstreamLineage', { upstreams: [{ dataset: rawOrders, type: 'COPY', auditStamp: { time: 0, actor: 'urn:li:corpuser:unknown' } }] });
        await ingest('lineage.yaml');

        const lineage = (await entity('dataset', ORDERS_DAILY)).upstreamLineage;
        assert.deepEqual(lineage.upstreams.map((u: { dataset: string; type: string }) => [u.dataset, u.type]), [
          [rawOrders, 'COPY'],
          [ORDERS, 'TRANSFORMED'],
          [CUSTOMERS, 'TRANSFORMED'],
        ]);
        assert.deepEqual(lineage.fineGrainedLineages, [
          {
            upstreamType: 'FIELD_SET',
            upstreams: [`urn:li:schemaField:(${ORDERS},amount)`],
            downstreamType: 'FIELD',
            downstreams: [`urn:li:schemaField:(${ORDERS_DAILY},total)`],
            transformOperation: 'SUM',
            confidenceScore: 0.9,
          },
        ]);
        // A dataset of a platform instance.
        const kafka = (await entity('dataset', 'urn:li:dataset:(urn:li:dataPlatform:kafka,cluster1.orders,PROD)')).upstreamLineage;
        assert.deepEqual(kafka.upstreams.map((u: { dataset: string }) => u.dataset), ['urn:li:dataset:(urn:li:dataPlatform:postgres,public.orders,PROD)']);
      });
    });
  }
}
