/**
 * `svc timeseries truncate`: deletes the entries of a time series aspect up to a time, through svc's
 * form of the truncation (counts and task in fields). A dry run (the server's message; with `--json`
 * its counts too) unless `--execute`; then a progress bar follows the task until it
 * completes (svc's task in `postgres` mode, OpenSearch's in `opensearch` mode, both through
 * `getEsTaskStatus`), or `--no-wait` returns at once with its id.
 */
import { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { Client } from '../../client.ts';
import { loadConfig } from '../../config.ts';
import { CliError } from '../../errors.ts';
import { command, printing } from '../../output.ts';
import { cutoffMillis } from '../../../contract/olderThan.ts';
import { svcTaskNumber, truncationProgress, type EsTaskStatus } from '../../../contract/tasks.ts';
import { TRUNCATIONS_PATH, type TruncationAnswer } from '../../../contract/truncation.ts';

/** A flag's integer, within `[min, max]` (whole numbers JSON carries exactly by default). */
const integer =
  (name: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) =>
  (v: string) => {
    const n = Number(v);
    if (!/^-?[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = min === Number.MIN_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER ? 'an integer' : max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
      throw new CliError(`--${name} must be ${range}, got ${v}`, 2);
    }
    return n;
  };

export function truncateCommand(): Command {
  return command('truncate', 'Delete the entries of a time series aspect at or before a time (a dry run unless --execute)', ['svc timeseries truncate --entity-type dataset --aspect datasetProfile --older-than 90d', 'svc timeseries truncate --entity-type dataset --aspect datasetProfile --older-than 90d --execute'])
    .requiredOption('--entity-type <type>', 'entity type, e.g. dataset')
    .requiredOption('--aspect <aspect>', 'time series aspect, e.g. datasetProfile')
    .option('--older-than <age>', 'entries older than this age, a whole number and a unit (s, m, h, d, w, y, or written out): 30d, 12h, 90 days, …')
    .option('--end-time-millis <millis>', 'entries at or before this time (epoch milliseconds)', integer('end-time-millis'))
    .option('--execute', 'delete (without it, only say what would be deleted)')
    .option('--batch-size <n>', 'entries per batch (default 10000)', integer('batch-size', -(2 ** 31), 2 ** 31 - 1))
    .option('--timeout <seconds>', 'stop after this many seconds', integer('timeout', 1))
    .option('--no-wait', 'return once the task is queued, with its id')
    .action(printing(async (opts: { entityType: string; aspect: string; olderThan?: string; endTimeMillis?: number; execute?: boolean; batchSize?: number; timeout?: number; wait: boolean; json?: boolean }, out) => {
      if ((opts.olderThan === undefined) === (opts.endTimeMillis === undefined)) throw new CliError('Give one of --older-than <age> (e.g. 30d) or --end-time-millis <millis>', 2);
      let endTimeMillis = opts.endTimeMillis;
      if (opts.olderThan !== undefined) {
        endTimeMillis = cutoffMillis(opts.olderThan, Date.now());
        if (endTimeMillis === undefined) throw new CliError(`--older-than must be an age, a number and a unit (s, m, h, d, w or y), such as 30d, 12h or 90 days; got ${opts.olderThan}`, 2);
      }
      const client = new Client(loadConfig());
      const body = {
        entityType: opts.entityType,
        aspect: opts.aspect,
        endTimeMillis,
        dryRun: !opts.execute,
        ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
        ...(opts.timeout !== undefined ? { timeoutSeconds: opts.timeout } : {}),
      };
      const answer = (await client.ok('POST', TRUNCATIONS_PATH, body)) as TruncationAnswer;
      if (answer.dryRun) {
        out.line(answer.message);
        out.result({ message: answer.message, toDelete: answer.toDelete, total: answer.total, reindex: answer.reindex, endTimeMillis });
        return;
      }
      const value = answer.task;
      if (!opts.wait) {
        const svcTask = svcTaskNumber(value);
        out.line(`Truncation task ${value} queued: follow it with ${svcTask !== undefined ? `svc tasks get ${svcTask}` : 'the operations action getEsTaskStatus'}`);
        out.result({ task: value, endTimeMillis });
        return;
      }
      const bar = opts.json ? undefined : new SingleBar({ format: 'Truncating [{bar}] {value}/{total} entries', hideCursor: true }, Presets.shades_classic);
      const end = await followTask(client, value, (total, done) => {
        if (!bar) return;
        if (!bar.isActive) bar.start(total, done);
        bar.setTotal(total);
        bar.update(done);
      });
      bar?.stop();
      // A reindex reports what it copied, not what it left out; with nothing to copy or delete, the
      // two cannot be told apart, and both leave nothing at or before the time.
      const line =
        end.kept !== undefined
          ? `the index was rebuilt with the ${end.kept} entries after the time kept`
          : end.total === 0
            ? 'no entry at or before the time is left'
            : `deleted ${end.deleted} of ${end.total} entries`;
      out.line(`Truncation task ${value} completed: ${line}`);
      out.result({ task: value, endTimeMillis, total: end.total, deleted: end.deleted, ...(end.kept !== undefined ? { kept: end.kept } : {}) });
    }));
}

/**
 * Follows a truncation task through the operations action `getEsTaskStatus` (svc's own or
 * OpenSearch's: the one route for both) until it has completed: a delete by query reports what it
 * deleted of its total; a reindex (more than half the entries go, in `opensearch` mode) the entries it
 * copied into the new index, `kept`.
 */
async function followTask(client: Client, task: string, progress: (total: number, done: number) => void): Promise<{ total: number; deleted: number; kept?: number }> {
  for (;;) {
    const { value } = (await client.ok('POST', '/gms/operations?action=getEsTaskStatus', { task })) as { value: string };
    const st = truncationProgress(JSON.parse(value) as EsTaskStatus);
    if (st.error !== undefined) throw new CliError(`Truncation task ${task}: ${st.error}`);
    const { total = 0, deleted, kept } = st.found ? st : { total: 0, deleted: 0, kept: 0 };
    progress(total, deleted + kept);
    if (st.found && st.completed) return kept > 0 ? { total, deleted, kept } : { total, deleted };
    await new Promise((r) => setTimeout(r, 500));
  }
}
