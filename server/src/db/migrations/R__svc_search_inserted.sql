-- Queues in the search outbox every entity that a statement inserted a latest row of a search-relevant
-- aspect for (the rule of R__svc_search_changed.sql, for inserts): once per statement and entity, from
-- the statement's rows (a transition table), not once per row: a write statement inserts the rows of a
-- whole group commit (R__svc_write_checked.sql), and a new entity's key aspect with its other aspects.
-- Only when a row queues something: an insert into the outbox, even of no rows, would notify the
-- dispatchers (R__svc_notify.sql).
--
-- (Updates keep row triggers: a statement trigger with transition tables captures every row the
-- statement changes, and a write updates rows of every aspect in place (system metadata) or into
-- history (version); those that matter to search are few.)
CREATE OR REPLACE FUNCTION svc_search_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  queued text[];
BEGIN
  SELECT array_agg(DISTINCT urn) INTO queued
    FROM inserted WHERE version = 0 AND svc_search_aspect(aspect);
  IF queued IS NOT NULL THEN
    INSERT INTO search_outbox (urn) SELECT unnest(queued);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER aspects_search_inserted AFTER INSERT ON aspects
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION svc_search_inserted();
