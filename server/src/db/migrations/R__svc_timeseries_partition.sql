-- Creates (if missing) the partition of timeseries_entries holding p_ts of index p_index, and that
-- index's table (svc_timeseries_parent); returns the partition's name: <parent>_<yyyymm> for a time from
-- 1970 to the end of 9999, else <parent>_other, the index's default partition, for the odd timestamps a
-- long may hold. Called before the write that needs the partition (timeseries/partitions.ts), never
-- inside a write that holds entity locks: partition DDL is serialised by an advisory lock and runs in
-- its own short transaction.
--
-- The default partition holds only times outside 1970–9999 (its CHECK svc_timeseries_other_range):
-- without it, an entry of a month whose partition a truncation had just dropped would go there (a
-- writer still believing the month's partition existed), and the month's partition could then no
-- longer be made. With it, such a write fails like a write to a missing partition, and the writer makes
-- the partition and writes again.
CREATE OR REPLACE FUNCTION svc_timeseries_partition(p_index text, p_ts bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  in_range boolean := p_ts BETWEEN 0 AND 253402300799999;
  start_ts timestamptz := CASE WHEN in_range THEN date_trunc('month', to_timestamp(p_ts / 1000.0), 'UTC') END;
  lo bigint := (extract(epoch FROM start_ts) * 1000)::bigint;
  hi bigint := (extract(epoch FROM start_ts + interval '1 month') * 1000)::bigint;
  parent text := svc_timeseries_parent(p_index);
  child text := parent || '_' || coalesce(to_char(start_ts AT TIME ZONE 'UTC', 'YYYYMM'), 'other');
BEGIN
  IF to_regclass(child) IS NOT NULL THEN
    RETURN child;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('svc_timeseries_partitions'));
  IF to_regclass(parent) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF timeseries_entries FOR VALUES IN (%L) PARTITION BY RANGE (timestamp_millis)', parent, p_index);
  END IF;
  IF to_regclass(child) IS NULL AND NOT in_range THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I (CONSTRAINT svc_timeseries_other_range CHECK (timestamp_millis < 0 OR timestamp_millis > 253402300799999)) DEFAULT', child, parent);
  ELSIF to_regclass(child) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)', child, parent, lo, hi);
  END IF;
  RETURN child;
END
$$;
