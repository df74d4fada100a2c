-- A read of an older version of an entity's structuredProperties (`?version=N`) hides values written
-- under an older definition version, as a read of the latest does; the latest record says nothing
-- about an older row (its values may have been replaced since by values of a newer version). So when a
-- latest row moves into history, its record (structured_property_assignments) is copied to
-- structured_property_assignment_history under the version number the row gets, which it keeps for
-- good (history rows are never renumbered), in the statement that moves it: the record then still
-- describes that row (the row replacing it is inserted by a later statement). A deleted history row
-- takes its record with it.
CREATE OR REPLACE FUNCTION svc_keep_assignment_history() RETURNS trigger
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

CREATE OR REPLACE TRIGGER aspects_assignment_history_kept AFTER UPDATE OF version ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version = 0 AND NEW.version <> 0)
  EXECUTE FUNCTION svc_keep_assignment_history();
CREATE OR REPLACE TRIGGER aspects_assignment_history_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version <> 0)
  EXECUTE FUNCTION svc_keep_assignment_history();
