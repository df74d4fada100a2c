/**
 * A time series entry's identity, as DataHub derives the id of a time series document in the aspect's
 * index: the entity, `timestampMillis` and, when the value has them, its `eventGranularity`, its
 * `partitionSpec`'s `partition` or `timePartition` (not its `type`) and its `messageId`. Entries of one
 * identity are one entry: a write of a stored one replaces it (see docs/reference/timeseries.md).
 *
 * Made here, from the value the write path holds parsed: the database would parse the stored text
 * (`json`) once for each field it takes, which costs more than the rest of the insert for a profile of
 * a few kilobytes.
 */
import { createHash } from 'node:crypto';

/**
 * The key of an entry: the md5 of its index (DataHub's name), entity and identity fields, as a uuid (the
 * `entry_key` of timeseries_entries and the `_id` of its document in OpenSearch). Objects are compared
 * whatever the order of their keys: `{"unit": "DAY", "multiple": 1}` is `{"multiple": 1, "unit": "DAY"}`.
 */
export function entryKey(index: string, urn: string, value: Record<string, unknown>): string {
  const spec = (value.partitionSpec ?? undefined) as { partition?: unknown; timePartition?: unknown } | undefined;
  const parts = [index, urn, value.timestampMillis, value.eventGranularity ?? null, spec?.partition ?? null, spec?.timePartition ?? null, value.messageId ?? null];
  const hex = createHash('md5').update(JSON.stringify(sorted(parts))).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A JSON value with the keys of its objects in order, at every depth. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
}
