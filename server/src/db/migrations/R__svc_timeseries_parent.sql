-- The table of one time series index's partitions (timeseries_entries is partitioned by index, then by
-- month): ts_<index name>, or ts_<md5 of it> when the name would be too long for a table name.
-- Used by svc_timeseries_partition and by truncation (timeseries/postgresStore.ts).
CREATE OR REPLACE FUNCTION svc_timeseries_parent(p_index text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN length(p_index) <= 48 THEN 'ts_' || p_index ELSE 'ts_' || md5(p_index) END
$$;
