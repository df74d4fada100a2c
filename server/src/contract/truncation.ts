/**
 * svc's own form of a time series truncation, `POST /api/timeseries/truncations`: the parameters of
 * DataHub's `truncateTimeseriesAspect` action, answered with structured counts (a dry run) or the
 * task (a real run), so that no client reads them out of DataHub's sentence. The action itself
 * (`/gms/operations?action=truncateTimeseriesAspect`) answers as DataHub does, with that sentence.
 */

export const TRUNCATIONS_PATH = '/api/timeseries/truncations';

/** A truncation: entries of `aspect` of every `entityType` entity with `timestampMillis <= endTimeMillis` go. */
export interface TruncationRequest {
  entityType: string;
  aspect: string;
  endTimeMillis: number;
  /** Default true: only count and say what would be done. */
  dryRun?: boolean;
  /** Entries per batch (default 10000). */
  batchSize?: number;
  /** Stop after this many seconds, leaving what is left. */
  timeoutSeconds?: number;
  forceDeleteByQuery?: boolean;
  forceReindex?: boolean;
}

/**
 * What a truncation answers: a dry run its counts (`toDelete` of `total` entries), whether the index
 * would be rebuilt without the old entries (`reindex`) rather than have them deleted, and DataHub's
 * sentence saying so; a real run the id of its task (see tasks.ts for its progress).
 */
export type TruncationAnswer = { dryRun: true; toDelete: number; total: number; reindex: boolean; message: string } | { dryRun: false; task: string };
