-- The definitions and statuses of the structured properties whose qualified name is one of p_names,
-- or becomes one of p_fields with its dots replaced by underscores (how search names unversioned
-- properties; properties/propertyStore.ts findProperties). A function for the reason of migration
-- 019: prepared inline, a plan cached on empty tables joined aspects with itself by nested sequential
-- scans, a walk of every entity's status for every definition once the catalog had grown. Here the
-- names are found through their expression indexes and the rows by primary key, however full the
-- tables were when the plan was made.
CREATE FUNCTION svc_find_properties(p_names text[], p_fields text[])
RETURNS TABLE (urn text, aspect text, metadata json)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT x.urn, x.aspect, x.metadata FROM aspects x
   WHERE x.version = 0 AND x.aspect IN ('propertyDefinition', 'status')
     AND x.urn = ANY (ARRAY(
       SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND (d.metadata::jsonb) ->> 'qualifiedName' = ANY (p_names)
       UNION
       SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND replace((d.metadata::jsonb) ->> 'qualifiedName', '.', '_') = ANY (p_fields)));
END
$$;
