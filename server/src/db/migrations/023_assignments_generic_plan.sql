-- The record of assignments (migrations 007 and 008), kept by a trigger on every structuredProperties
-- write, made with plans that stay lookups by key whatever the tables held when they were made, and
-- made once per connection.
--
-- svc_replace_assignments was planned anew on every call (so that a plan made while the table was
-- nearly empty would not keep scanning it whole), and planning its two statements cost more than
-- running them. The trigger's own lookup of each property's definition was planned once per connection
-- as a join: made on a fresh install, it read every propertyDefinition row with a sequential scan of
-- aspects on each write, until the next ANALYZE. Now both run one generic plan per connection with
-- sequential scans off, and the definition is read by key, one lookup per property.
--
-- `pgbench` of svc_write_checked, one row per call, four clients, the search trigger off: 3,800 to
-- 4,150 writes/s before, 4,700 to 5,200 after (6,300 to 6,700 with no trigger at all).
-- test/server/plan-stability.test.ts checks the plans.
ALTER FUNCTION svc_replace_assignments(text, text[], text[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION svc_replace_assignments(text, text[], text[]) SET enable_seqscan = off;

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
