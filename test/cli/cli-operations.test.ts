/**
 * The `svc` binary's operations, run as a child process against a started server: `timeseries
 * truncate` (dry run, --execute waiting for the task, --no-wait), `tasks get/list`, and `delete`
 * (soft, hard with and without confirmation, dry run, a missing entity).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { onTerminal } from '../support/terminal.ts';
import { runSvc, SVC_BIN } from '../support/cli.ts';
import { ADMIN_TOKEN, enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;

before(async () => {
  s = await startTestServer();
});
after(() => s.close());

const svc = (args: string[]) => runSvc(s.url, args);

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,cli.profiled,PROD)';

async function profile(t: number): Promise<void> {
  await text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t } }) }), 200);
}

describe('svc timeseries truncate and svc tasks', () => {
  before(async () => {
    for (const t of [1000, 2000, 3000, 4000]) await profile(t);
  });

  test('tasks list says so when there are none of a kind', async () => {
    const r = await svc(['tasks', 'list', '--kind', 'property-stale-values']);
    assert.deepEqual([r.code, r.stdout], [0, 'No tasks\n']);
  });

  test('tasks list: an unknown --kind or --state is a usage error naming the allowed values', async () => {
    const kind = await svc(['tasks', 'list', '--kind', 'bogus']);
    assert.deepEqual([kind.code, kind.stdout], [2, '']);
    assert.match(kind.stderr, /option '--kind <kind>' argument 'bogus' is invalid\. Allowed choices are property-hard-delete, property-stale-values, timeseries-truncate, search-index-rebuild\./);
    const state = await svc(['tasks', 'list', '--state', 'bogus']);
    assert.deepEqual([state.code, state.stdout], [2, '']);
    assert.match(state.stderr, /option '--state <state>' argument 'bogus' is invalid\. Allowed choices are PENDING, RUNNING, SUCCEEDED\./);
  });

  test('a dry run unless --execute: the server’s message', async () => {
    const r = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--end-time-millis', '2000']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Delete 2 out of 4 rows (50.00%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.\n');
    const older = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--older-than', '30d', '--json']);
    assert.match(JSON.parse(older.stdout).message, /^Delete 4 out of 4 rows \(100\.00%\)\. Reindexing/);
  });

  test('--execute follows the task to the end; --no-wait returns its id, which svc tasks shows', async () => {
    const r = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--end-time-millis', '1000', '--execute']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Truncation task svc:\d+ completed: deleted 1 of 1 entries\n$/);
    const queued = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--end-time-millis', '2000', '--execute', '--no-wait', '--json']);
    const task = JSON.parse(queued.stdout).task as string;
    assert.match(task, /^svc:\d+$/);
    const got = await svc(['tasks', 'get', task, '--json']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(JSON.parse(got.stdout).kind, 'timeseries-truncate');
    const listed = await svc(['tasks', 'list', '--kind', 'timeseries-truncate']);
    assert.ok(listed.stdout.split('\n').some((l) => l.startsWith(`${task.split(':')[1]}\ttimeseries-truncate\t`)), listed.stdout);
    const missing = await svc(['tasks', 'get', '999999']);
    assert.deepEqual([missing.code, missing.stderr], [1, 'No task with id 999999\n']);
  });

  test('usage errors: no time, a bad age, a bad number, a bad aspect from the server', async () => {
    const none = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile']);
    assert.deepEqual([none.code, none.stderr], [2, 'Give one of --older-than <age> (e.g. 30d) or --end-time-millis <millis>\n']);
    // An age needs its unit, in small letters: a bare 90 would be 90 ms to `ms`, and 1M a minute.
    for (const given of ['soon', '90', '1M', '0.5ms', '1 month', '1000000000000d']) {
      const age = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--older-than', given]);
      assert.deepEqual([age.code, age.stdout], [2, ''], given);
      assert.equal(age.stderr, `--older-than must be an age, a number and a unit (s, m, h, d, w or y), such as 30d, 12h or 90 days; got ${given}\n`);
    }
    const weeks = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--older-than', '2w', '--json']);
    assert.equal(weeks.code, 0, weeks.stderr);
    const cutoff = JSON.parse(weeks.stdout).endTimeMillis as number;
    assert.ok(Math.abs(Date.now() - 14 * 86_400_000 - cutoff) < 600_000, `2w is two weeks ago: ${cutoff}`);
    const number = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', '--end-time-millis', 'x']);
    assert.equal(number.code, 2);
    // Numbers the server would refuse are usage errors of their flags.
    const flags: [string[], string][] = [
      [['--end-time-millis', '99999999999999999999'], '--end-time-millis must be an integer, got 99999999999999999999'],
      [['--end-time-millis', '1', '--timeout', '0'], '--timeout must be an integer of at least 1, got 0'],
      [['--end-time-millis', '1', '--batch-size', '3000000000'], '--batch-size must be an integer from -2147483648 to 2147483647, got 3000000000'],
    ];
    for (const [args, message] of flags) {
      const r = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'datasetProfile', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    }
    const aspect = await svc(['timeseries', 'truncate', '--entity-type', 'dataset', '--aspect', 'status', '--end-time-millis', '1']);
    assert.equal(aspect.code, 1);
    assert.match(aspect.stderr, /status is not a time series aspect of dataset/);
  });
});

describe('svc delete', () => {
  const PROPERTY = 'urn:li:structuredProperty:cli.doomed';

  before(async () => {
    await text(
      await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROPERTY)}/propertyDefinition?createIfNotExists=false`, {
        method: 'POST',
        body: JSON.stringify({ value: { qualifiedName: 'cli.doomed', valueType: 'urn:li:dataType:svc.string', entityTypes: ['urn:li:entityType:svc.dataset'] } }),
      }),
      200,
    );
  });

  test('soft by default: the status says removed, and the summary line', async () => {
    const dry = await svc(['delete', '--urn', PROPERTY, '-n']);
    // DataHub's dry-run line, the same for either kind.
    assert.equal(dry.stdout, '[Dry-run] Would delete 1 entities (impacts 1 versioned rows and 0 timeseries aspect rows).\n');
    const both = await svc(['delete', '--urn', PROPERTY, '--soft', '--hard', '-f']);
    assert.deepEqual([both.code, both.stderr], [2, 'Give --soft or --hard, not both\n']);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROPERTY)}/status`), 404);
    const r = await svc(['delete', '--urn', PROPERTY]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Soft deleted 1 entities \(impacts 1 versioned rows and 0 timeseries aspect rows\) in \d+\.\d\d seconds\.\n$/);
    const status = JSON.parse(await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROPERTY)}/status`), 200));
    assert.deepEqual(status.status.value, { removed: true });
  });

  test('--hard asks first: without a terminal it needs -f; with -f the entity is gone', async () => {
    const asked = await svc(['delete', '--urn', PROPERTY, '--hard']);
    assert.deepEqual([asked.code, asked.stderr], [2, 'A hard delete asks for confirmation: pass -f (--force) to delete without a terminal\n']);
    // On a terminal: anything but y/yes keeps the entity.
    const env = { PATH: process.env.PATH, SVC_GMS_URL: s.url, SVC_GMS_TOKEN: ADMIN_TOKEN, SVC_ENV_FILE: '/nonexistent/svcenv' };
    const question = /This will permanently delete data from svc\. Do you want to continue\? \[y\/N\]: $/;
    const declined = await onTerminal([process.execPath, SVC_BIN, 'delete', '--urn', PROPERTY, '--hard'], env, [{ prompt: question, type: 'n' }]);
    assert.equal(declined.code, 1, declined.screen);
    assert.match(declined.screen, /Nothing deleted\n/);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROPERTY)}/propertyDefinition`), 200);
    const r = await svc(['delete', '--urn', PROPERTY, '--hard', '-f']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Hard deleted 1 entities \(impacts 3 versioned rows and 0 timeseries aspect rows\) in /);
    await text(await s.request(`/openapi/v3/entity/structuredProperty/${enc(PROPERTY)}/propertyDefinition`), 404);
    const again = await svc(['delete', '--urn', PROPERTY, '--hard', '-f']);
    assert.deepEqual([again.code, again.stdout], [0, `Nothing deleted for ${PROPERTY}\n`]);
    const bad = await svc(['delete', '--urn', 'not-a-urn']);
    assert.equal(bad.code, 2);
  });

  test('a hard delete counts the versioned aspects and the time series entries it takes (--soft is the default named)', async () => {
    const dataset = 'urn:li:dataset:(urn:li:dataPlatform:hive,cli.counted,PROD)';
    const path = `/openapi/v3/entity/dataset/${enc(dataset)}`;
    await text(await s.request(`${path}/status`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
    await text(await s.request(`${path}/datasetProperties`, { method: 'POST', body: '{"value":{"name":"counted"}}' }), 200);
    for (const t of [1000, 2000, 3000]) await text(await s.request(`${path}/datasetProfile`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: t } }) }), 200);
    // status, datasetProperties and the key; three entries of datasetProfile.
    const dry = await svc(['delete', '--urn', dataset, '--hard', '-n']);
    assert.equal(dry.stdout, '[Dry-run] Would delete 1 entities (impacts 3 versioned rows and 3 timeseries aspect rows).\n');
    const soft = await svc(['delete', '--urn', dataset, '--soft']);
    assert.match(soft.stdout, /^Soft deleted 1 entities \(impacts 1 versioned rows and 0 timeseries aspect rows\)/);
    const hard = await svc(['delete', '--urn', dataset, '--hard', '-f']);
    assert.equal(hard.code, 0, hard.stderr);
    assert.match(hard.stdout, /^Hard deleted 1 entities \(impacts 3 versioned rows and 3 timeseries aspect rows\) in /);
    const left = JSON.parse(await text(await s.request(`/openapi/v2/timeseries/dataset/datasetProfile?urn=${enc(dataset)}`), 200));
    assert.deepEqual(left.results, []);
  });
});
