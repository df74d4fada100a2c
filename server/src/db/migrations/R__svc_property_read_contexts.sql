-- What entity reads need to hide structured-property values (properties/propertyStore.ts,
-- loadReadContext), for the given entities, as two rows of plain text (fields separated by US, records
-- by RS: chr(31) and chr(30); URNs and versions hold no control characters): `p`, the visibility of the
-- properties they hold, `<property URN> US <aspect> US <value>` from their definitions (the version, ''
-- without one) and statuses ('t' when soft deleted, the test of entities/softDelete.ts, else ''); and
-- `r`, their record of assignments, `<entity URN> US <property URN> US <definition version>`. Built as
-- JSON, the record took twice as long.
--
-- A function, so that its plan is made with every key an index condition whatever the tables held when
-- it was made: inline in the reads' prepared statements, a plan cached while the tables were nearly
-- empty (a fresh install; right after an ANALYZE of an empty table) joined them by nested sequential
-- scans, and a read of a few hundred entities once the tables had grown ran for hours. Lookups by URN
-- with `version <= 0` (see R__svc_property_write_contexts.sql). test/server/plan-stability.test.ts
-- checks the plans.
CREATE OR REPLACE FUNCTION svc_property_read_contexts(p_entities text[])
RETURNS TABLE (kind text, a text, b text, c text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT 'p', NULL::text, NULL::text,
    (SELECT string_agg(p.urn || chr(31) || p.aspect || chr(31) ||
              CASE WHEN p.aspect = 'propertyDefinition' THEN coalesce(p.metadata ->> 'version', '')
                   WHEN p.metadata::jsonb @> '{"removed": true}' THEN 't' ELSE '' END, chr(30))
       FROM aspects p WHERE p.version <= 0 AND p.aspect IN ('propertyDefinition', 'status')
        AND p.urn = ANY (ARRAY(SELECT DISTINCT s.property_urn FROM structured_property_assignments s WHERE s.entity_urn = ANY (p_entities))))
  UNION ALL
  SELECT 'r', NULL, NULL,
    (SELECT string_agg(s.entity_urn || chr(31) || s.property_urn || chr(31) || s.definition_version, chr(30))
       FROM structured_property_assignments s WHERE s.entity_urn = ANY (p_entities));
END
$$;
