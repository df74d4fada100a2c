-- Time series entries, partitioned so that a truncation drops whole months instead of deleting row by
-- row: first by index (the entity type and aspect, named as DataHub names the index, e.g.
-- dataset_datasetprofileaspect_v1), then by calendar month (UTC) of timestampMillis. Partitions are
-- created on first use by svc_timeseries_partition, before the write that needs them.
CREATE SEQUENCE timeseries_entries_id_seq;

CREATE TABLE timeseries_entries (
  id               bigint NOT NULL DEFAULT nextval('timeseries_entries_id_seq'),
  index_name       text NOT NULL,
  entity_type      text NOT NULL,
  aspect           text NOT NULL,
  urn              text COLLATE "C" NOT NULL,
  timestamp_millis bigint NOT NULL,
  metadata         json NOT NULL,
  system_metadata  jsonb NOT NULL DEFAULT '{}',
  created_on       timestamptz NOT NULL DEFAULT now(),
  created_by       text NOT NULL
) PARTITION BY LIST (index_name);
ALTER SEQUENCE timeseries_entries_id_seq OWNED BY timeseries_entries.id;

-- The latest entries of an entity (reads, the DELETE of the latest entry); entries by time (truncation).
CREATE INDEX timeseries_entries_by_urn ON timeseries_entries (urn, aspect, timestamp_millis DESC, id DESC);
CREATE INDEX timeseries_entries_by_time ON timeseries_entries (timestamp_millis);

-- The table of one index's partitions: ts_<index name> (an md5 of it when too long for a name).
CREATE FUNCTION svc_timeseries_parent(p_index text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN length(p_index) <= 48 THEN 'ts_' || p_index ELSE 'ts_' || md5(p_index) END
$$;

-- Creates (if missing) the partition holding p_ts of index p_index, and that index's table; returns
-- the partition's name: <parent>_<yyyymm> for a time from 1970 to the end of 9999, else <parent>_other
-- (the index's default partition, for the odd timestamps a long may hold). Partition DDL is
-- serialised by an advisory lock and runs in its own short transaction, never inside a write that
-- holds entity locks.
CREATE FUNCTION svc_timeseries_partition(p_index text, p_ts bigint) RETURNS text LANGUAGE plpgsql AS $$
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
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', child, parent);
  ELSIF to_regclass(child) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)', child, parent, lo, hi);
  END IF;
  RETURN child;
END
$$;

-- The entries written so far move over.
SELECT svc_timeseries_partition(index_name, ts)
  FROM (SELECT DISTINCT ON (index_name, month) index_name, ts
          FROM (SELECT lower(entity_type || '_' || aspect || 'aspect_v1') AS index_name, timestamp_millis AS ts,
                       CASE WHEN timestamp_millis BETWEEN 0 AND 253402300799999 THEN date_trunc('month', to_timestamp(timestamp_millis / 1000.0), 'UTC') END AS month
                  FROM timeseries_aspects) e
         ORDER BY index_name, month) months;
INSERT INTO timeseries_entries (index_name, entity_type, aspect, urn, timestamp_millis, metadata, system_metadata, created_on, created_by)
SELECT lower(entity_type || '_' || aspect || 'aspect_v1'), entity_type, aspect, urn, timestamp_millis, metadata, system_metadata, created_on, created_by
  FROM timeseries_aspects ORDER BY id;
DROP TABLE timeseries_aspects;
