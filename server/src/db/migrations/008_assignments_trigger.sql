-- The record of assignments follows the latest structuredProperties row of each entity by itself, in
-- the statement that writes or deletes it, whichever path wrote it: each property in the value is
-- recorded under its definition's current version. That is what svc recorded before from the
-- application (a write re-checks what changed and what was stale against the current version; what it
-- carries over unchanged was already recorded under the current version, since versions never
-- decrease), now without a round trip of its own.
CREATE FUNCTION svc_record_assignments() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  properties text[];
  versions text[];
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM structured_property_assignments WHERE entity_urn = OLD.urn;
    RETURN NULL;
  END IF;
  SELECT coalesce(array_agg(p.urn ORDER BY p.urn), '{}'), coalesce(array_agg(coalesce(d.metadata ->> 'version', '') ORDER BY p.urn), '{}')
    INTO properties, versions
    FROM (SELECT DISTINCT e ->> 'propertyUrn' AS urn FROM json_array_elements(NEW.metadata -> 'properties') e) p
    LEFT JOIN aspects d ON d.urn = p.urn AND d.aspect = 'propertyDefinition' AND d.version = 0;
  PERFORM svc_replace_assignments(NEW.urn, properties, versions);
  RETURN NULL;
END
$$;

-- The latest row is inserted (a new value), or updated in place (the same value again: its system
-- metadata); a row moved into history changes its version and is left alone.
CREATE TRIGGER aspects_assignments_written AFTER INSERT OR UPDATE ON aspects
  FOR EACH ROW WHEN (NEW.aspect = 'structuredProperties' AND NEW.version = 0)
  EXECUTE FUNCTION svc_record_assignments();
CREATE TRIGGER aspects_assignments_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.aspect = 'structuredProperties' AND OLD.version = 0)
  EXECUTE FUNCTION svc_record_assignments();
