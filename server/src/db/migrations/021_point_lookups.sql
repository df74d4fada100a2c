-- Lookups of the latest rows of given entities, one index probe per (URN, aspect), whatever the
-- planner knows of the tables.
--
-- Written as `urn = ANY (…) AND aspect = … AND version = 0`, a lookup can be served by the primary key
-- or by the index of latest rows by aspect (aspect, urn). Before any ANALYZE has seen a freshly loaded
-- catalog (autovacuum comes a minute or more later), the planner estimated one row per aspect and chose
-- the latter with the aspect as its only key, filtering every entity of that aspect by URN: a
-- structured-property write read the rows of all 5,000 datasets of a fresh load (15 ms instead of 0.1),
-- and writes ran at 40% of their rate until autovacuum came by. Here each URN (and aspect) is probed on
-- its own, in a subquery the planner cannot flatten (OFFSET 0) that names both keys: every index it can
-- use is an exact lookup. (test/server/plan-stability.test.ts)

-- The latest rows of every pair of p_urns × p_aspects that has one (each pair once).
CREATE FUNCTION svc_latest_rows(p_urns text[], p_aspects text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT x.* FROM (SELECT DISTINCT t.urn FROM unnest(p_urns) AS t(urn)) u
    CROSS JOIN (SELECT DISTINCT t.aspect FROM unnest(p_aspects) AS t(aspect)) a
    CROSS JOIN LATERAL (SELECT * FROM aspects y WHERE y.urn = u.urn AND y.aspect = a.aspect AND y.version = 0 OFFSET 0) x
$$;

-- Every aspect's latest row of the given entities.
CREATE FUNCTION svc_latest_rows(p_urns text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT x.* FROM (SELECT DISTINCT t.urn FROM unnest(p_urns) AS t(urn)) u
    CROSS JOIN LATERAL (SELECT * FROM aspects y WHERE y.urn = u.urn AND y.version = 0 OFFSET 0) x
$$;

-- The record of assignments of the given entities (each once), by its primary key.
CREATE FUNCTION svc_assignments_of(p_entities text[])
RETURNS SETOF structured_property_assignments LANGUAGE sql STABLE AS $$
  SELECT s.* FROM (SELECT DISTINCT t.urn FROM unnest(p_entities) AS t(urn)) u
    CROSS JOIN LATERAL (SELECT * FROM structured_property_assignments y WHERE y.entity_urn = u.urn OFFSET 0) s
$$;

-- Migration 009's write contexts, the same rows.
CREATE OR REPLACE FUNCTION svc_property_write_contexts(p_urns text[], p_key_aspects text[], p_aspect text, p_named text[])
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  WITH stored AS (SELECT * FROM svc_latest_rows(p_urns, ARRAY[p_aspect]))
  SELECT 's', x.urn, x.created_by, x.metadata::text, x.system_metadata::text, x.created_on FROM stored x
  UNION ALL
  SELECT 'e', x.urn, NULL, NULL, x.metadata::text, NULL FROM svc_latest_rows(p_urns, p_key_aspects) x
  UNION ALL
  SELECT 'p', x.urn, x.aspect, x.metadata::text, NULL, NULL
    FROM svc_latest_rows(ARRAY(
      SELECT unnest(p_named)
      UNION
      SELECT e->>'propertyUrn' FROM stored s,
        json_array_elements(CASE WHEN json_typeof(s.metadata->'properties') = 'array' THEN s.metadata->'properties' ELSE '[]' END) AS e),
      ARRAY['propertyDefinition', 'status']) x
  UNION ALL
  (SELECT 'v', s.entity_urn, s.property_urn, s.definition_version, NULL, NULL
     FROM svc_assignments_of(p_urns) s ORDER BY s.entity_urn, s.property_urn);
END
$$;

-- Migration 019's read contexts, the same rows.
CREATE OR REPLACE FUNCTION svc_property_read_contexts(p_entities text[])
RETURNS TABLE (kind text, a text, b text, c text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  WITH recorded AS (SELECT * FROM svc_assignments_of(p_entities))
  SELECT 'p', NULL::text, NULL::text,
    (SELECT string_agg(p.urn || chr(31) || p.aspect || chr(31) ||
              CASE WHEN p.aspect = 'propertyDefinition' THEN coalesce(p.metadata ->> 'version', '')
                   WHEN p.metadata::jsonb @> '{"removed": true}' THEN 't' ELSE '' END, chr(30))
       FROM svc_latest_rows(ARRAY(SELECT r.property_urn FROM recorded r), ARRAY['propertyDefinition', 'status']) p)
  UNION ALL
  SELECT 'r', NULL, NULL,
    (SELECT string_agg(s.entity_urn || chr(31) || s.property_urn || chr(31) || s.definition_version, chr(30)) FROM recorded s);
END
$$;

-- Migration 020's lookup by name, the same rows.
CREATE OR REPLACE FUNCTION svc_find_properties(p_names text[], p_fields text[])
RETURNS TABLE (urn text, aspect text, metadata json)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT x.urn, x.aspect, x.metadata FROM svc_latest_rows(ARRAY(
    SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND (d.metadata::jsonb) ->> 'qualifiedName' = ANY (p_names)
    UNION
    SELECT d.urn FROM aspects d WHERE d.aspect = 'propertyDefinition' AND d.version = 0 AND replace((d.metadata::jsonb) ->> 'qualifiedName', '.', '_') = ANY (p_fields)),
    ARRAY['propertyDefinition', 'status']) x;
END
$$;

-- Migration 011's definition write contexts, the same rows.
CREATE OR REPLACE FUNCTION svc_definition_write_contexts(p_urns text[], p_names text[], p_cleanup_kind text)
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz, id bigint, done bigint, total bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT CASE x.aspect WHEN 'propertyDefinition' THEN 's' ELSE 'st' END, x.urn,
         CASE x.aspect WHEN 'propertyDefinition' THEN x.created_by END, x.metadata::text,
         CASE x.aspect WHEN 'propertyDefinition' THEN x.system_metadata::text END,
         CASE x.aspect WHEN 'propertyDefinition' THEN x.created_on END, NULL::bigint, NULL::bigint, NULL::bigint
    FROM svc_latest_rows(p_urns, ARRAY['propertyDefinition', 'status']) x
  UNION ALL
  SELECT 'h', x.urn, (x.metadata::jsonb) ->> 'qualifiedName', NULL, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect = 'propertyDefinition' AND x.version = 0 AND (x.metadata::jsonb) ->> 'qualifiedName' = ANY (p_names)
  UNION ALL
  -- (Open tasks are few: the partial index of open tasks finds them.)
  SELECT 't', t.subject, t.params ->> 'qualifiedName', NULL, NULL, NULL, t.id, t.done, t.total
    FROM tasks t WHERE t.state IN ('PENDING', 'RUNNING') AND t.kind = p_cleanup_kind
     AND (t.subject = ANY (p_urns) OR t.params ->> 'qualifiedName' = ANY (p_names))
  UNION ALL
  SELECT CASE x.aspect WHEN 'dataTypeKey' THEN 'd' ELSE 'e' END, x.urn, NULL, x.metadata::text, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect IN ('dataTypeKey', 'entityTypeKey') AND x.version = 0;
END
$$;
