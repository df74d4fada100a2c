import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcError } from '../shared/errors.ts';
import { countLine, flagConflict, parseTruncation, reindexes, summary } from './truncation.ts';

const base = { entityType: 'dataset', aspect: 'datasetProfile', endTimeMillis: 1_700_000_000_000 };

test('defaults: a dry run, batches of 10000 (also for a size of 0 or less), no timeout, no flags', () => {
  assert.deepEqual(parseTruncation(base), { ...base, dryRun: true, batchSize: 10_000, timeoutSeconds: undefined, forceDeleteByQuery: undefined, forceReindex: undefined });
  assert.equal(parseTruncation({ ...base, batchSize: 0 }).batchSize, 10_000);
  assert.equal(parseTruncation({ ...base, batchSize: -5 }).batchSize, 10_000);
  assert.equal(parseTruncation({ ...base, batchSize: 500, dryRun: null }).batchSize, 500);
  assert.equal(parseTruncation({ ...base, dryRun: false }).dryRun, false);
});

test('batchSize is a Java int, as in DataHub: a larger one is refused rather than queued to fail', () => {
  assert.equal(parseTruncation({ ...base, batchSize: 2 ** 31 - 1 }).batchSize, 2 ** 31 - 1);
  assert.throws(() => parseTruncation({ ...base, batchSize: 2 ** 31 }), (e: SvcError) => e.code === 'VALIDATION' && e.violations[0] === "Parameter 'batchSize' must be an integer from -2147483648 to 2147483647, got 2147483648");
});

test('every missing, mistyped or unknown parameter is named at once', () => {
  const err = (() => {
    try {
      parseTruncation({ aspect: 5, endTimeMillis: '1700', dryRun: 'false', batchsize: 10 });
    } catch (e) {
      return e as SvcError;
    }
    throw new Error('accepted');
  })();
  assert.equal(err.code, 'VALIDATION');
  assert.deepEqual(err.violations, [
    "Parameter 'batchsize' is not a parameter of truncateTimeseriesAspect (they are entityType, aspect, endTimeMillis, dryRun, batchSize, timeoutSeconds, forceDeleteByQuery, forceReindex)",
    "Parameter 'entityType' is required",
    "Parameter 'aspect' must be a string (not empty), got 5",
    "Parameter 'endTimeMillis' must be an integer of epoch milliseconds (a long), got \"1700\"",
    "Parameter 'dryRun' must be true or false, got \"false\"",
  ]);
  assert.throws(() => parseTruncation([]), /must be a JSON object/);
  assert.throws(() => parseTruncation({ ...base, endTimeMillis: 1.5 }), /'endTimeMillis' must be an integer of epoch milliseconds \(a long\), got 1.5/);
});

test('a timeout of 0 seconds or less is refused, naming the parameter (it would stop the run before it deleted anything)', () => {
  for (const timeoutSeconds of [0, -1]) {
    assert.throws(
      () => parseTruncation({ ...base, dryRun: false, timeoutSeconds }),
      (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && e.message === `Parameter 'timeoutSeconds' must be an integer of at least 1, got ${timeoutSeconds}`,
    );
  }
  assert.equal(parseTruncation({ ...base, timeoutSeconds: 1 }).timeoutSeconds, 1);
});

test('the flag check: forceDeleteByQuery given and equal to forceReindex', () => {
  const conflict = 'please only set forceReindex OR forceDeleteByQuery flags';
  assert.equal(flagConflict(parseTruncation({ ...base, forceDeleteByQuery: true, forceReindex: true })), conflict);
  assert.equal(flagConflict(parseTruncation({ ...base, forceDeleteByQuery: false, forceReindex: false })), conflict);
  assert.equal(flagConflict(parseTruncation({ ...base, forceDeleteByQuery: false })), undefined);
  assert.equal(flagConflict(parseTruncation({ ...base, forceReindex: true })), undefined);
  assert.equal(flagConflict(parseTruncation({ ...base, forceDeleteByQuery: true, forceReindex: false })), undefined);
});

test('the count line: two decimals, NaN for an empty index, a trailing space', () => {
  assert.equal(countLine(0, 201), 'Delete 0 out of 201 rows (0.00%). ');
  assert.equal(countLine(1, 201), 'Delete 1 out of 201 rows (0.50%). ');
  assert.equal(countLine(1, 3), 'Delete 1 out of 3 rows (33.33%). ');
  assert.equal(countLine(2, 3), 'Delete 2 out of 3 rows (66.67%). ');
  assert.equal(countLine(1, 8), 'Delete 1 out of 8 rows (12.50%). ');
  assert.equal(countLine(0, 0), 'Delete 0 out of 0 rows (NaN%). ');
});

test('reindex when more than half go (integer division), unless delete-by-query is forced', () => {
  assert.equal(reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, 100, 201), false);
  assert.equal(reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, 101, 201), true);
  assert.equal(reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, 100, 200), false);
  assert.equal(reindexes({ forceDeleteByQuery: undefined, forceReindex: undefined }, 101, 200), true);
  assert.equal(reindexes({ forceDeleteByQuery: true, forceReindex: undefined }, 200, 200), false);
  assert.equal(reindexes({ forceDeleteByQuery: undefined, forceReindex: true }, 0, 200), true);
  assert.equal(reindexes({ forceDeleteByQuery: false, forceReindex: undefined }, 0, 0), false);
});

test('the whole message, verbatim as DataHub writes it', () => {
  assert.equal(
    summary({ numToDelete: 0, total: 201 }, parseTruncation(base)),
    'Delete 0 out of 201 rows (0.00%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.',
  );
  assert.equal(
    summary({ numToDelete: 0, total: 0 }, parseTruncation(base)),
    'Delete 0 out of 0 rows (NaN%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute.',
  );
  assert.equal(
    summary({ numToDelete: 150, total: 201 }, parseTruncation(base)),
    'Delete 150 out of 201 rows (74.63%). Reindexing the aspect without the deleted records. This was a dry run. Run with dryRun = false to execute.',
  );
  assert.equal(summary({ numToDelete: 150, total: 201 }, parseTruncation({ ...base, dryRun: false })), 'Delete 150 out of 201 rows (74.63%). Reindexing the aspect without the deleted records. ');
});
