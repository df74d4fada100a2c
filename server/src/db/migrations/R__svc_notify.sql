-- Servers hear of changes other servers commit through notifications, sent as the change commits
-- (pg_notify on the channel the trigger names as its argument):
--  * `svc_search`: new outbox rows, time series entries and time series deletions, once per statement,
--    not per row. The search dispatcher (search/outbox.ts) delivers them at once rather than at its
--    next timed look. Time series writes and deletions in the `opensearch` store wait in their tables
--    for the same dispatcher.
--  * `svc_properties`: search resolves field names through the structured properties' definitions and
--    statuses, and each server keeps what it resolved until one of them changes
--    (properties/definitionCache.ts).
CREATE OR REPLACE FUNCTION svc_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(TG_ARGV[0], '');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER search_outbox_notify AFTER INSERT ON search_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION svc_notify('svc_search');
CREATE OR REPLACE TRIGGER timeseries_entries_notify AFTER INSERT ON timeseries_entries
  FOR EACH STATEMENT EXECUTE FUNCTION svc_notify('svc_search');
CREATE OR REPLACE TRIGGER timeseries_deletes_notify AFTER INSERT ON timeseries_deletes
  FOR EACH STATEMENT EXECUTE FUNCTION svc_notify('svc_search');

CREATE OR REPLACE TRIGGER aspects_property_written AFTER INSERT OR UPDATE ON aspects
  FOR EACH ROW WHEN (NEW.version = 0 AND NEW.aspect IN ('propertyDefinition', 'status') AND NEW.urn LIKE 'urn:li:structuredProperty:%')
  EXECUTE FUNCTION svc_notify('svc_properties');
CREATE OR REPLACE TRIGGER aspects_property_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.version = 0 AND OLD.aspect IN ('propertyDefinition', 'status') AND OLD.urn LIKE 'urn:li:structuredProperty:%')
  EXECUTE FUNCTION svc_notify('svc_properties');

-- The two functions these triggers called before they shared this one.
DROP FUNCTION IF EXISTS svc_search_notify();
DROP FUNCTION IF EXISTS svc_properties_notify();
