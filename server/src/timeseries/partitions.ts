/**
 * Where time series entries are kept: `timeseries_entries`, partitioned by index (DataHub's index name
 * of the entity type and aspect) and by calendar month, so that a truncation drops whole months (see
 * db/migrations/R__svc_timeseries_partition.sql). A partition is created before the write that needs
 * it, in its own short transaction (never inside a write holding entity locks); the months known to
 * exist are remembered.
 */
import type { Pool } from '../db/pool.ts';
import { query } from '../db/pool.ts';

/** DataHub's name of the index of a time series aspect: `dataset_datasetprofileaspect_v1`. */
export const timeseriesIndexName = (entity: string, aspect: string) => `${entity}_${aspect}aspect_v1`.toLowerCase();

/** The UTC month of an epoch-milliseconds time, as `yyyymm`; `other` outside 1970–9999 (the index's default partition). */
const monthOf = (ts: number) => {
  if (ts < 0 || ts > 253_402_300_799_999) return 'other';
  const d = new Date(ts);
  return String(d.getUTCFullYear() * 100 + d.getUTCMonth() + 1);
};

export class TimeseriesPartitions {
  private readonly known = new Set<string>();

  constructor(private readonly pool: Pool) {}

  /** Makes sure the partitions of these entries exist. */
  async ensure(entries: { entityType: string; aspect: string; timestampMillis: number }[]): Promise<void> {
    for (const e of entries) {
      const index = timeseriesIndexName(e.entityType, e.aspect);
      const key = `${index}|${monthOf(e.timestampMillis)}`;
      if (this.known.has(key)) continue;
      await query(this.pool, 'SELECT svc_timeseries_partition($1, $2)', [index, e.timestampMillis]);
      this.known.add(key);
    }
  }

  /** Forgets what is known (a truncation dropped partitions: they are looked up again). */
  forget(): void {
    this.known.clear();
  }
}

/**
 * Whether an error is Postgres' "no partition of relation … found for row", or the default partition
 * refusing a time of a month (its CHECK, see db/migrations/R__svc_timeseries_partition.sql): a
 * partition dropped under a write.
 */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; constraint?: unknown };
  if (e?.code === '23514' && typeof e.message === 'string' && e.message.includes('no partition')) return true;
  if (e?.code === '23514' && e.constraint === 'svc_timeseries_other_range') return true;
  return e?.cause !== undefined && e.cause !== err && isMissingPartition(e.cause);
}
