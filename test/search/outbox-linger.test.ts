/**
 * The search dispatcher under a stream of writes: after a small step it lingers
 * (`SVC_SEARCH_LINGER_MS`) and delivers what came meanwhile in one step, instead of one step per
 * commit; an entity queued many times is delivered once; nothing is lost or held back for good. On
 * both backends.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createDataset, propertyUrn, setValues, writeDefinition } from '../support/structuredProperties.ts';
import { pollUntil } from '../support/poll.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { startTestServer, text, type TestServer } from '../support/testServer.ts';

const BURST = propertyUrn('linger.burst');

for (const backend of searchBackends()) {
  describe(`search dispatcher lingering on ${backend.name}`, () => {
    let s: TestServer;
    before(async () => {
      // A linger long enough that the burst below is written well within it on any machine.
      s = await startTestServer({ ...backend.env, SVC_SEARCH_LINGER_MS: '3000' });
      await text(await writeDefinition(s, BURST, { qualifiedName: 'linger.burst', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] }), 200);
    });
    after(() => s?.close());

    async function metric(name: string): Promise<number> {
      const metrics = await (await s.request('/metrics', { token: null })).text();
      return Number(metrics.match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? NaN);
    }

    /** Runs `fn` while no dispatcher can take a step (their lock held here); the steps wait for it. */
    async function withDispatcherHeld(fn: () => Promise<void>): Promise<void> {
      const c = new pg.Client({ connectionString: s.databaseUrl });
      await c.connect();
      try {
        await c.query("SELECT pg_advisory_lock(hashtextextended('search:dispatcher', 0))");
        await fn();
      } finally {
        await c.end();
      }
    }

    async function found(q: string, count = 100): Promise<string[]> {
      const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}&count=${count}`);
      return ((await res.json()) as { entities: { urn: string }[] }).entities.map((e) => e.urn).sort();
    }

    test('writes made while the dispatcher lingers are delivered together, every one of them', async () => {
      const first = await createDataset(s, 'linger_first');
      await text(await setValues(s, first, [{ propertyUrn: BURST, values: [{ string: 'first' }] }]), 200);
      await pollUntil('the first write searchable', () => found('structuredProperties.linger_burst:first'), (got) => got.length === 1);
      const steps = await metric('svc_search_delivery_steps_total');
      const delivered = await metric('svc_search_delivered_total');
      const urns: string[] = [];
      for (let i = 0; i < 6; i++) {
        const urn = await createDataset(s, `linger_burst${i}`);
        await text(await setValues(s, urn, [{ propertyUrn: BURST, values: [{ string: 'burst' }] }]), 200);
        urns.push(urn);
      }
      assert.deepEqual(await pollUntil('the burst searchable', () => found('structuredProperties.linger_burst:burst'), (got) => got.length === 6), urns.sort());
      // Twelve commits (a dataset and its value, six times). The dispatcher was lingering or idle when
      // they began: at most one step for the first commit it heard of, one for all the rest.
      assert.ok((await metric('svc_search_delivered_total')) - delivered >= 6);
      const took = (await metric('svc_search_delivery_steps_total')) - steps;
      assert.ok(took >= 1 && took <= 2, `the burst took ${took} steps`);
    });

    test('an entity queued again and again before a step is delivered once, with how long it waited', async () => {
      // 300 new datasets, then a value on each: 600 outbox rows, more than a step's 500, queued while
      // no step can run. One step takes them all: each entity once, its document from what is
      // committed when the step takes it.
      const urns = Array.from({ length: 300 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,linger_many${i},PROD)`);
      const steps = await metric('svc_search_delivery_steps_total');
      const delivered = await metric('svc_search_delivered_total');
      const waited = await metric('svc_search_delivery_seconds_count');
      await withDispatcherHeld(async () => {
        await text(await s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify(urns.map((urn) => ({ urn, status: { value: { removed: false } } }))) }), 200);
        const values = urns.map((urn) => ({ urn, structuredProperties: { value: { properties: [{ propertyUrn: BURST, values: [{ string: 'many' }] }] } } }));
        await text(await s.request('/openapi/v3/entity/dataset?async=false', { method: 'POST', body: JSON.stringify(values) }), 200);
      });
      assert.equal((await pollUntil('the values searchable', () => found('structuredProperties.linger_burst:many', 1000), (got) => got.length === 300)).length, 300);
      await pollUntil('the step counted', () => metric('svc_search_delivered_total'), (n) => n - delivered >= 300);
      assert.equal((await metric('svc_search_delivered_total')) - delivered, 300);
      assert.equal((await metric('svc_search_delivery_steps_total')) - steps, 1);
      assert.equal((await metric('svc_search_delivery_seconds_count')) - waited, 300);
    });
  });
}
