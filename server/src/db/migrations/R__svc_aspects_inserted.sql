-- What follows an insert of aspect rows, once per statement from the statement's rows (a transition
-- table), not once per row: a write statement inserts the rows of a whole group commit
-- (R__svc_write_checked.sql), and a new entity's key aspect with its other aspects. One walk of the rows
-- gives both rules what they need:
--
-- - search: every entity the statement inserted a latest row of a search-relevant aspect for is queued
--   in the search outbox once (the rule of R__svc_search_changed.sql, for inserts). Only when a row
--   queues something: an insert into the outbox, even of no rows, would notify the dispatchers
--   (R__svc_notify.sql);
-- - the record of assignments, for the latest structuredProperties rows inserted
--   (R__svc_record_inserted_assignments.sql).
--
-- (Updates keep row triggers: a statement trigger with transition tables captures every row the
-- statement changes, and a write updates rows of every aspect in place (system metadata) or into
-- history (version); those that matter are few.)
CREATE OR REPLACE FUNCTION svc_aspects_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  queued text[];
  entities text[];
  latest_values json[];
BEGIN
  SELECT array_agg(DISTINCT urn) FILTER (WHERE version = 0 AND svc_search_aspect(aspect)),
         array_agg(urn) FILTER (WHERE aspect = 'structuredProperties' AND version = 0),
         array_agg(metadata) FILTER (WHERE aspect = 'structuredProperties' AND version = 0)
    INTO queued, entities, latest_values
    FROM inserted;
  IF queued IS NOT NULL THEN
    INSERT INTO search_outbox (urn) SELECT unnest(queued);
  END IF;
  IF entities IS NOT NULL THEN
    PERFORM svc_record_inserted_assignments(entities, latest_values);
  END IF;
  RETURN NULL;
END
$$;

-- The two statement triggers this one replaced, and their functions.
DROP TRIGGER IF EXISTS aspects_assignments_inserted ON aspects;
DROP TRIGGER IF EXISTS aspects_search_inserted ON aspects;
DROP FUNCTION IF EXISTS svc_record_inserted_assignments();
DROP FUNCTION IF EXISTS svc_search_inserted();

CREATE OR REPLACE TRIGGER aspects_inserted AFTER INSERT ON aspects
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
  EXECUTE FUNCTION svc_aspects_inserted();
