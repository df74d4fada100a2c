-- Migration 021's lookups by URN, made the way that keeps the speed of the analyzed steady state.
--
-- 021 probed each (URN, aspect) pair in a nested loop. On analyzed tables that made structured-property
-- writes about 10% slower than the plans of one index scan they had before (`npm run
-- bench:structured-properties`, alternating with the build before 021). Here the statements are those
-- of migrations 009, 011, 019 and 020 again, with one change in their lookups by URN: `version <= 0`
-- instead of `version = 0`. Versions start at 0 (the latest), so the rows are the same; but the planner
-- cannot prove the predicate of the partial index of latest rows by aspect from it, and that index,
-- scanned with the aspect as its only key and every entity of the aspect filtered by URN, is the plan
-- 021 is about. The primary key (urn, aspect, version) is left, with the URNs as its leading condition:
-- an exact lookup whatever the planner knows. (Lookups by qualified name keep `version = 0`: their
-- expression indexes need it.) test/server/plan-stability.test.ts checks both.

CREATE OR REPLACE FUNCTION svc_latest_rows(p_urns text[], p_aspects text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT * FROM aspects WHERE urn = ANY (p_urns) AND aspect = ANY (p_aspects) AND version <= 0
$$;

CREATE OR REPLACE FUNCTION svc_latest_rows(p_urns text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT * FROM aspects WHERE urn = ANY (p_urns) AND version <= 0
$$;

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

CREATE OR REPLACE FUNCTION svc_definition_write_contexts(p_urns text[], p_names text[], p_cleanup_kind text)
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz, id bigint, done bigint, total bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT 's', x.urn, x.created_by, x.metadata::text, x.system_metadata::text, x.created_on, NULL::bigint, NULL::bigint, NULL::bigint
    FROM aspects x WHERE x.aspect = 'propertyDefinition' AND x.urn = ANY (p_urns) AND x.version <= 0
  UNION ALL
  SELECT 'st', x.urn, NULL, x.metadata::text, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect = 'status' AND x.urn = ANY (p_urns) AND x.version <= 0
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

DROP FUNCTION svc_assignments_of(text[]);
