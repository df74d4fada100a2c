/**
 * The search dispatcher under a stream of writes: after a small step it lingers
 * (`SVC_SEARCH_LINGER_MS`) and delivers what came meanwhile in one step, instead of one step per
 * commit; nothing is lost or held back for good. On both backends.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
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

    async function found(q: string): Promise<string[]> {
      const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}&count=100`);
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
  });
}
