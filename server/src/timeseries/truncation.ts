/**
 * The rules of `truncateTimeseriesAspect` (DataHub's operations action), as pure functions: its
 * parameters and their defaults, the flag check, the summary message and the choice between deleting
 * the old entries and rebuilding the index without them. The time series stores apply the choice.
 *
 *   summary({ numToDelete: 1, total: 201 }, request) →
 *     "Delete 1 out of 201 rows (0.50%). Issuing a delete by query request. This was a dry run. Run with dryRun = false to execute."
 */
import { readParameters, type ParameterSpec } from './actionParameters.ts';

/** The batch size used when none (or one ≤ 0) is given. */
export const DEFAULT_BATCH_SIZE = 10_000;

export interface TruncationRequest {
  entityType: string;
  aspect: string;
  /** Entries with `timestampMillis <= endTimeMillis` go (the boundary is inclusive). */
  endTimeMillis: number;
  dryRun: boolean;
  batchSize: number;
  /** Undefined: no timeout. */
  timeoutSeconds: number | undefined;
  forceDeleteByQuery: boolean | undefined;
  forceReindex: boolean | undefined;
}

/** `timeoutSeconds` takes at least 1: a timeout of 0 or less would stop the run before it deletes anything. */
const PARAMETERS: Record<string, ParameterSpec> = {
  entityType: { kind: 'string', required: true },
  aspect: { kind: 'string', required: true },
  endTimeMillis: { kind: 'time', required: true },
  dryRun: { kind: 'boolean' },
  // DataHub's batchSize is a Java int: a larger one was accepted here and then failed the task at every try.
  batchSize: { kind: 'int' },
  timeoutSeconds: { kind: 'long', minimum: 1 },
  forceDeleteByQuery: { kind: 'boolean' },
  forceReindex: { kind: 'boolean' },
};

/**
 * The request of a body; VALIDATION listing every missing, mistyped or unknown parameter (e.g.
 * `Parameter 'endTimeMillis' is required`; see actionParameters.ts).
 */
export function parseTruncation(body: unknown): TruncationRequest {
  const given = readParameters('truncateTimeseriesAspect', PARAMETERS, body);
  const opt = <T>(name: string) => given[name] as T | undefined;
  const batchSize = opt<number>('batchSize');
  return {
    entityType: given.entityType as string,
    aspect: given.aspect as string,
    endTimeMillis: given.endTimeMillis as number,
    dryRun: opt<boolean>('dryRun') ?? true,
    batchSize: batchSize === undefined || batchSize <= 0 ? DEFAULT_BATCH_SIZE : batchSize,
    timeoutSeconds: opt<number>('timeoutSeconds'),
    forceDeleteByQuery: opt<boolean>('forceDeleteByQuery'),
    forceReindex: opt<boolean>('forceReindex'),
  };
}

/**
 * DataHub's flag check: both flags set to the same value (`forceDeleteByQuery` given and equal to
 * `forceReindex`) is answered with this line, as a success (HTTP 200), and nothing is done.
 */
export function flagConflict(r: TruncationRequest): string | undefined {
  if (r.forceDeleteByQuery !== undefined && r.forceDeleteByQuery === r.forceReindex) return 'please only set forceReindex OR forceDeleteByQuery flags';
  return undefined;
}

/** Whether to rebuild without the old entries rather than delete them: forced, or more than half (integer division) go. */
export function reindexes(r: Pick<TruncationRequest, 'forceDeleteByQuery' | 'forceReindex'>, numToDelete: number, total: number): boolean {
  return r.forceDeleteByQuery !== true && (r.forceReindex === true || numToDelete > Math.floor(total / 2));
}

/** `Delete 1 out of 201 rows (0.50%). ` — two decimals, `NaN` when there are no entries, a trailing space. */
export function countLine(numToDelete: number, total: number): string {
  const percent = total === 0 ? 'NaN' : ((numToDelete / total) * 100).toFixed(2);
  return `Delete ${numToDelete} out of ${total} rows (${percent}%). `;
}

/** The whole message of a truncation: counts, what would be done, and for a dry run how to run it. */
export function summary(counts: { numToDelete: number; total: number }, r: TruncationRequest): string {
  const how = reindexes(r, counts.numToDelete, counts.total) ? 'Reindexing the aspect without the deleted records. ' : 'Issuing a delete by query request. ';
  const line = countLine(counts.numToDelete, counts.total) + how;
  return r.dryRun ? `${line}This was a dry run. Run with dryRun = false to execute.` : line;
}
