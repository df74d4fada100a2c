-- The record of assignments is left alone when a write gives an entity's structured properties again
-- unchanged (the latest row updated in place, its system metadata alone), unless a property's
-- definition has a newer version than its values were recorded under (a write that gives values of an
-- older version again records them under the current one: they are shown again).
--
-- The record is only ever written by this trigger, from the latest row's value, so with the value
-- unchanged it holds the same properties, and only their versions can be behind. Replacing it anyway
-- cost more than the rest of such a write: its upsert locks every record row it finds, even when it
-- changes nothing. `npm run bench:structured-properties`' set pass, whose writes are all of this kind
-- once every entity has its value, with the trigger of migration 023 against this one, alternating
-- rounds of 6 s on the bench's server (wrk, 16 connections): 2,927 / 3,016 / 2,884 sets/s against
-- 3,377 / 3,599 / 3,529, Postgres' CPU per set (with wrk's) from 272–290 to 203–213 µs.
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
