-- The record of assignments (migrations 007, 008) says, for the latest structuredProperties row of each
-- entity, the definition version each property's values were written under; reads hide values of an
-- older version by it. A read of an older version of the aspect (`?version=N`) needs the same for
-- that row: the latest record says nothing about it (the values it holds may have been replaced since
-- by values of a newer version). So when a latest row moves into history, its record is kept under
-- the version number it gets, which it keeps for good (history rows are never renumbered), in the
-- statement that moves it: the record then still describes that row (the row replacing it is inserted
-- by a later statement).
CREATE TABLE structured_property_assignment_history (
  entity_urn         text COLLATE "C" NOT NULL,
  -- The row's version in `aspects` (1 .. n-1; 0 is the latest, whose record is structured_property_assignments).
  aspect_version     bigint NOT NULL,
  property_urn       text COLLATE "C" NOT NULL,
  definition_version text NOT NULL,
  PRIMARY KEY (entity_urn, aspect_version, property_urn)
);

CREATE FUNCTION svc_keep_assignment_history() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM structured_property_assignment_history WHERE entity_urn = OLD.urn AND aspect_version = OLD.version;
    RETURN NULL;
  END IF;
  INSERT INTO structured_property_assignment_history (entity_urn, aspect_version, property_urn, definition_version)
    SELECT s.entity_urn, NEW.version, s.property_urn, s.definition_version
      FROM structured_property_assignments s WHERE s.entity_urn = NEW.urn
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER aspects_assignment_history_kept AFTER UPDATE OF version ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version = 0 AND NEW.version <> 0)
  EXECUTE FUNCTION svc_keep_assignment_history();
CREATE TRIGGER aspects_assignment_history_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version <> 0)
  EXECUTE FUNCTION svc_keep_assignment_history();

-- The history written before this migration gets its record in migration 027, a transaction of its own:
-- here, CREATE TRIGGER holds a lock on `aspects` that would stop every write for as long as the backfill
-- reads the whole history.
