-- Search never misses a change: every change of what an entity's search document is built from (the
-- aspects svc_search_aspect names: its key aspect, its status, its structured properties, the aspects
-- of DataHub's common search fields; for a structured property, its definition) queues
-- the entity in the search outbox (search_outbox; the dispatcher is search/outbox.ts) in the statement
-- that makes it, whichever path wrote it. This function queues a latest row updated or deleted;
-- inserted rows are queued once per statement (R__svc_aspects_inserted.sql).
CREATE OR REPLACE FUNCTION svc_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_outbox (urn) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.urn ELSE NEW.urn END);
  RETURN NULL;
END
$$;

-- A latest row is updated in place only for its system metadata (the same value written again), which
-- changes no document: only an update of its metadata queues.
CREATE OR REPLACE TRIGGER aspects_search_updated AFTER UPDATE OF metadata ON aspects
  FOR EACH ROW WHEN (NEW.version = 0 AND svc_search_aspect(NEW.aspect))
  EXECUTE FUNCTION svc_search_changed();
CREATE OR REPLACE TRIGGER aspects_search_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.version = 0 AND svc_search_aspect(OLD.aspect))
  EXECUTE FUNCTION svc_search_changed();
