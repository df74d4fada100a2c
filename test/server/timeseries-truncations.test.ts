/**
 * svc's own form of a truncation, `POST /api/timeseries/truncations`: the counts and the task in
 * fields, for the operator and the CLI, beside DataHub's action that says them in a sentence.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';
import { TRUNCATIONS_PATH, type TruncationAnswer } from '../../server/src/contract/truncation.ts';
import { svcTaskNumber } from '../../server/src/contract/tasks.ts';
import { pollUntil } from '../support/poll.ts';

let s: TestServer;
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,truncations.profiled,PROD)';

before(async () => {
  s = await startTestServer();
  for (const t of [1000, 2000, 3000, 4000]) {
    await text(await s.request(`/openapi/v3/entity/dataset/${enc(URN)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t } }) }), 200);
  }
});
after(async () => {
  await s.close();
});

const truncation = (body: Record<string, unknown>, token?: string) => s.request(TRUNCATIONS_PATH, { method: 'POST', body: JSON.stringify(body), ...(token ? { token } : {}) });

test('a dry run answers its counts in fields, and DataHub’s sentence as the action says it', async () => {
  const body = { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 2000 };
  const res = await truncation(body);
  assert.equal(res.status, 200);
  const answer = (await res.json()) as TruncationAnswer;
  const action = (await (await s.request('/gms/operations?action=truncateTimeseriesAspect', { method: 'POST', body: JSON.stringify(body) })).json()) as { value: string };
  assert.deepEqual(answer, { dryRun: true, toDelete: 2, total: 4, reindex: false, message: action.value });
  assert.equal(answer.message, 'Delete 2 out of 4 rows (50.00%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.');
  const most = (await (await truncation({ ...body, endTimeMillis: 3000 })).json()) as TruncationAnswer;
  assert.deepEqual(most.dryRun && [most.toDelete, most.total, most.reindex], [3, 4, true]);
});

test('a real run answers 202 with its task, whose counts the task status gives', async () => {
  const res = await truncation({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 1000, dryRun: false });
  assert.equal(res.status, 202);
  const answer = (await res.json()) as TruncationAnswer;
  assert.equal(answer.dryRun, false);
  const task = !answer.dryRun ? answer.task : '';
  assert.ok(svcTaskNumber(task), task);
  const done = await pollUntil(
    `task ${task}`,
    async () => (await (await s.request(`/api/tasks/${svcTaskNumber(task)}`)).json()) as { state: string; done: number },
    (t) => t.state === 'SUCCEEDED',
  );
  assert.equal(done.done, 1);
});

test('refusals: both flags alike (the action’s 200 line) is a 400 here; a parameter missing; not an admin', async () => {
  const flags = await truncation({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 1, forceDeleteByQuery: true, forceReindex: true });
  assert.equal(flags.status, 400);
  assert.deepEqual(await flags.json(), { error: 'Validation Error', message: 'please only set forceReindex OR forceDeleteByQuery flags' });
  const missing = await truncation({ entityType: 'dataset', aspect: 'datasetProfile' });
  assert.equal(missing.status, 400);
  assert.match(((await missing.json()) as { message: string }).message, /endTimeMillis/);
  const created = (await (await s.request('/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'truncations-writer', role: 'writer' }) })).json()) as { token: string };
  const writer = await truncation({ entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 1 }, created.token);
  assert.equal(writer.status, 403);
});
