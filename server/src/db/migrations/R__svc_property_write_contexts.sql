-- What structured-property writes read before their checked write, for several entities at once
-- (properties/propertyStore.ts, loadWriteContexts): rows of the given entities (`s`: their aspect
-- p_aspect, `e`: their key aspect, `v`: their recorded assignments) and of the properties named or held
-- (`p`: definitions and statuses).
--
-- One generic plan per connection (planning this query cost more than running it), with every lookup
-- by key whatever the tables held when the plan was made: lookups by URN say `version <= 0` rather than
-- `version = 0` (the same rows: versions start at 0), so that the planner cannot take the partial index
-- of latest rows by aspect (aspects_latest_by_aspect) with the aspect as its only key and filter every
-- entity of the aspect by URN; the primary key is left, with the URNs as its leading condition.
-- test/server/plan-stability.test.ts checks the plans.
CREATE OR REPLACE FUNCTION svc_property_write_contexts(p_urns text[], p_key_aspects text[], p_aspect text, p_named text[])
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT 's', x.urn, x.created_by, x.metadata::text, x.system_metadata::text, x.created_on
    FROM aspects x WHERE x.aspect = p_aspect AND x.urn = ANY (p_urns) AND x.version <= 0
  UNION ALL
  SELECT 'e', x.urn, NULL, NULL, x.metadata::text, NULL
    FROM aspects x WHERE x.aspect = ANY (p_key_aspects) AND x.urn = ANY (p_urns) AND x.version <= 0
  UNION ALL
  SELECT 'p', x.urn, x.aspect, x.metadata::text, NULL, NULL FROM aspects x
   WHERE x.aspect IN ('propertyDefinition', 'status') AND x.version <= 0 AND x.urn = ANY (ARRAY(
     SELECT unnest(p_named)
     UNION
     SELECT e->>'propertyUrn' FROM aspects s,
       json_array_elements(CASE WHEN json_typeof(s.metadata->'properties') = 'array' THEN s.metadata->'properties' ELSE '[]' END) AS e
      WHERE s.aspect = p_aspect AND s.urn = ANY (p_urns) AND s.version <= 0))
  UNION ALL
  -- (In the primary key's order, so that a plan made on an empty table reads the primary key, whose
  -- first column is entity_urn, not the index by property.)
  (SELECT 'v', s.entity_urn, s.property_urn, s.definition_version, NULL, NULL
     FROM structured_property_assignments s WHERE s.entity_urn = ANY (p_urns) ORDER BY s.entity_urn, s.property_urn);
END
$$;
