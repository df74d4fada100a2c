-- The definitions and statuses of the structured properties whose qualified name is one of p_names, or
-- becomes one of p_fields with its dots replaced by underscores (how search names unversioned
-- properties; properties/propertyStore.ts, findProperties). A function for the reason given in
-- R__svc_property_read_contexts.sql: prepared inline, a plan cached on empty tables joined aspects with
-- itself by nested sequential scans. Here the names are found through their expression indexes
-- (`version = 0`, which those indexes need) and the rows by primary key (`version <= 0`, see
-- R__svc_property_write_contexts.sql), however full the tables were when the plan was made.
CREATE OR REPLACE FUNCTION svc_find_properties(p_names text[], p_fields text[])
RETURNS TABLE (urn text, aspect text, metadata json)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT x.urn, x.aspect, x.metadata FROM aspects x
   WHERE x.version <= 0 AND x.aspect IN ('propertyDefinition', 'status')
     AND x.urn = ANY (ARRAY(
       SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND (d.metadata::jsonb) ->> 'qualifiedName' = ANY (p_names)
       UNION
       SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND replace((d.metadata::jsonb) ->> 'qualifiedName', '.', '_') = ANY (p_fields)));
END
$$;
