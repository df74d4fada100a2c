-- The `opensearch` time series store (server/src/timeseries/opensearchStore.ts): `timeseries_entries`
-- is then the outbox of time series writes, shipped to OpenSearch by the search dispatcher and deleted
-- once there. Deletions of entries already shipped wait here, ordered with the writes by the same
-- sequence: `entry` deletes the listed entries (the latest of an aspect, DataHub's DELETE), `entity`
-- every entry of the URN written before it (a hard delete).
-- The shipping step takes the oldest rows of the outbox first.
CREATE INDEX timeseries_entries_by_id ON timeseries_entries (id);

CREATE TABLE timeseries_deletes (
  id         bigint PRIMARY KEY DEFAULT nextval('timeseries_entries_id_seq'),
  kind       text NOT NULL CHECK (kind IN ('entry', 'entity')),
  index_name text,
  urn        text COLLATE "C" NOT NULL,
  entry_ids  bigint[] NOT NULL DEFAULT '{}',
  queued_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX timeseries_deletes_by_urn ON timeseries_deletes (urn);

-- The dispatcher hears of time series writes and deletions as they commit, as of search changes.
CREATE TRIGGER timeseries_entries_notify AFTER INSERT ON timeseries_entries
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();
CREATE TRIGGER timeseries_deletes_notify AFTER INSERT ON timeseries_deletes
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();

-- The indices that have received entries, recorded by the shipping step that delivers their first
-- ones (in the transaction that takes those entries out of the outbox), so that a read in any process
-- knows where to look without asking OpenSearch.
CREATE TABLE timeseries_indices (
  index_name text PRIMARY KEY
);
