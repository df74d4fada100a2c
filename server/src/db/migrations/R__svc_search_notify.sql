-- The search dispatcher (search/outbox.ts) hears of new outbox rows, time series entries and time
-- series deletions as their transaction commits (channel `svc_search`, once per statement, not per
-- row), and delivers them at once rather than at its next timed look.
CREATE OR REPLACE FUNCTION svc_search_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_search', '');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER search_outbox_notify AFTER INSERT ON search_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();
-- Time series writes and deletions in the `opensearch` store wait in their tables for the same dispatcher.
CREATE OR REPLACE TRIGGER timeseries_entries_notify AFTER INSERT ON timeseries_entries
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();
CREATE OR REPLACE TRIGGER timeseries_deletes_notify AFTER INSERT ON timeseries_deletes
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();
