-- A truncation by reindex in `opensearch` mode moves the index's alias to a new index before its
-- transaction commits (the transaction that records the truncation's task). A failure or a kill
-- between the two left the alias on the new index with no task to finish the copy, and every entry of
-- the aspect unreadable. The request now records beforehand, committed on its own, what it is about to
-- change; the search dispatcher, which waits for the request's transaction (the same lock), finds the
-- record and either drops it (the truncation committed: its task carries the same token) or puts
-- OpenSearch back as it was (timeseries/opensearchStore.ts, settleGuards).
CREATE TABLE timeseries_truncation_guards (
  token            uuid PRIMARY KEY,
  alias            text NOT NULL,
  fresh_index      text NOT NULL,
  old_indices      text[] NOT NULL,
  opensearch_task  text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
