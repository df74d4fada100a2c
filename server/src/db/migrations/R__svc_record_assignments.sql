-- The record of assignments (structured_property_assignments) follows the latest structuredProperties
-- row of each entity by itself, in the statement that writes or deletes it, whichever path wrote it:
-- each property named in the value is recorded under its definition's current version; a deleted row
-- takes its record with it. This function handles a latest row updated in place or deleted.
--
-- A row updated in place holds the value it held (only its system metadata changed), so its record
-- names the same properties and only their versions can be behind: the record is left alone unless a
-- property's definition has a newer version than its values were recorded under (values of an older
-- version given again are recorded under the current one, and shown again). Replacing it anyway cost
-- more than the rest of such a write (its upsert locks every record row it finds).
--
-- Sequential scans off: the definitions are read by key, one lookup per property, whatever the tables
-- held when the plan was made.
CREATE OR REPLACE FUNCTION svc_record_assignments() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  properties text[];
  versions text[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM structured_property_assignments WHERE entity_urn = OLD.urn;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.metadata::text = NEW.metadata::text AND NOT EXISTS (
       SELECT 1 FROM structured_property_assignments a
        WHERE a.entity_urn = NEW.urn
          AND a.definition_version <> coalesce((SELECT d.metadata ->> 'version' FROM aspects d
                                                 WHERE d.urn = a.property_urn AND d.aspect = 'propertyDefinition' AND d.version = 0), '')) THEN
    RETURN NULL;
  END IF;
  SELECT coalesce(array_agg(p.urn ORDER BY p.urn), '{}'),
         coalesce(array_agg(coalesce((SELECT d.metadata ->> 'version' FROM aspects d
                                       WHERE d.urn = p.urn AND d.aspect = 'propertyDefinition' AND d.version = 0), '')
                            ORDER BY p.urn), '{}')
    INTO properties, versions
    FROM (SELECT DISTINCT e ->> 'propertyUrn' AS urn FROM json_array_elements(NEW.metadata -> 'properties') e) p;
  PERFORM svc_replace_assignments(NEW.urn, properties, versions);
  RETURN NULL;
END
$$;

-- The latest row updated in place (the same value again: its system metadata), or deleted; a row moved
-- into history changes its version and is left alone (R__svc_keep_assignment_history.sql keeps its
-- record). Inserted rows have their record from a statement trigger (R__svc_aspects_inserted.sql).
CREATE OR REPLACE TRIGGER aspects_assignments_updated AFTER UPDATE ON aspects
  FOR EACH ROW WHEN (NEW.aspect = 'structuredProperties' AND NEW.version = 0)
  EXECUTE FUNCTION svc_record_assignments();
CREATE OR REPLACE TRIGGER aspects_assignments_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version = 0)
  EXECUTE FUNCTION svc_record_assignments();
