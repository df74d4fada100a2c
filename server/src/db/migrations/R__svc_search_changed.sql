-- Search never misses a change: every change of what an entity's search document is built from (its
-- key aspect, its status, its structured properties; for a structured property, its definition) queues
-- the entity in the search outbox (search_outbox; the dispatcher is search/outbox.ts) in the statement
-- that makes it, whichever path wrote it. This function queues a latest row updated or deleted;
-- inserted rows are queued once per statement (R__svc_search_inserted.sql).
CREATE OR REPLACE FUNCTION svc_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_outbox (urn) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.urn ELSE NEW.urn END);
  RETURN NULL;
END
$$;

-- A latest row is updated in place only for its system metadata (the same value written again), which
-- changes no document: only an update of its metadata queues. Key aspects are named `<entity>Key`.
CREATE OR REPLACE TRIGGER aspects_search_updated AFTER UPDATE OF metadata ON aspects
  FOR EACH ROW WHEN (NEW.version = 0 AND (NEW.aspect IN ('status', 'structuredProperties', 'propertyDefinition') OR NEW.aspect LIKE '%Key'))
  EXECUTE FUNCTION svc_search_changed();
CREATE OR REPLACE TRIGGER aspects_search_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.version = 0 AND (OLD.aspect IN ('status', 'structuredProperties', 'propertyDefinition') OR OLD.aspect LIKE '%Key'))
  EXECUTE FUNCTION svc_search_changed();
