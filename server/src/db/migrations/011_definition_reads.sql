-- What propertyDefinition updates read before their checked write, for several properties at once,
-- without locks (see properties/propertyStore.ts): `s` the stored definition of each, `st` its status
-- row, `h` the properties whose definition holds one of the names, `t` the open hard-delete tasks of the
-- properties or of the names, `d` and `e` the key rows of the data types and of the entity types.
-- Every statement finds its rows by key, with one generic plan per connection (see migration 009).
CREATE FUNCTION svc_definition_write_contexts(p_urns text[], p_names text[], p_cleanup_kind text)
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz, id bigint, done bigint, total bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
  SELECT 's', x.urn, x.created_by, x.metadata::text, x.system_metadata::text, x.created_on, NULL::bigint, NULL::bigint, NULL::bigint
    FROM aspects x WHERE x.aspect = 'propertyDefinition' AND x.urn = ANY (p_urns) AND x.version = 0
  UNION ALL
  SELECT 'st', x.urn, NULL, x.metadata::text, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect = 'status' AND x.urn = ANY (p_urns) AND x.version = 0
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
