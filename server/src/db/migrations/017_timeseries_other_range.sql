-- The default partition of an index (`…_other`) holds only times outside 1970–9999. Without a check,
-- an entry of a month whose partition a truncation had just dropped went there (a writer still
-- believing the month's partition existed), and the month's partition could then no longer be made
-- ("would be violated by some row"). With the check, such a write fails like a write to a missing
-- partition, and the writer makes the partition and writes again (entityService).
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' AND c.relname LIKE 'ts\_%' LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT svc_timeseries_other_range CHECK (timestamp_millis < 0 OR timestamp_millis > 253402300799999)', r.relname);
  END LOOP;
END
$$;

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
