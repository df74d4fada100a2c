-- A hard delete of the entries of one time series aspect of an entity within a time range (DataHub's
-- `POST /entities?action=delete` with `aspectName`, `startTimeMillis` and `endTimeMillis`): in the
-- `opensearch` store it waits here for the dispatcher, ordered with the writes, as the other deletions
-- do; `range` deletes the entries of `urn` in `index_name` with start_millis <= timestampMillis <=
-- end_millis (an absent bound is open) written before it.
ALTER TABLE timeseries_deletes DROP CONSTRAINT timeseries_deletes_kind_check;
ALTER TABLE timeseries_deletes ADD CONSTRAINT timeseries_deletes_kind_check CHECK (kind IN ('entry', 'entity', 'range'));
ALTER TABLE timeseries_deletes ADD COLUMN start_millis bigint, ADD COLUMN end_millis bigint;
