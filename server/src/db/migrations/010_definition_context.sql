-- What a propertyDefinition write checks, in one round trip (see properties/propertyStore.ts), under
-- the lock of the qualified name it claims (so two definitions cannot claim one name at once):
--  h: another property whose definition holds the name; t: an open hard-delete task of this property
--  or of the name (subject, id, done, total); s: the property's status row; d, e: the URNs of the
--  data types and of the entity types.
CREATE FUNCTION svc_definition_write_context(p_urn text, p_qualified_name text, p_cleanup_kind text)
RETURNS TABLE (kind text, a text, id bigint, done bigint, total bigint) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('qualifiedName:' || p_qualified_name, 0));
  RETURN QUERY
  (SELECT 'h', x.urn, NULL::bigint, NULL::bigint, NULL::bigint FROM aspects x
    WHERE x.aspect = 'propertyDefinition' AND x.version = 0 AND (x.metadata::jsonb) ->> 'qualifiedName' = p_qualified_name AND x.urn <> p_urn
    LIMIT 1)
  UNION ALL
  (SELECT 't', t.subject, t.id, t.done, t.total FROM tasks t
    WHERE t.kind = p_cleanup_kind AND t.state <> 'SUCCEEDED' AND (t.subject = p_urn OR t.params ->> 'qualifiedName' = p_qualified_name)
    ORDER BY t.id LIMIT 1)
  UNION ALL
  SELECT 's', x.metadata::text, NULL, NULL, NULL FROM aspects x WHERE x.urn = p_urn AND x.aspect = 'status' AND x.version = 0
  UNION ALL
  SELECT CASE x.aspect WHEN 'dataTypeKey' THEN 'd' ELSE 'e' END, x.urn, NULL, NULL, NULL FROM aspects x
   WHERE x.aspect IN ('dataTypeKey', 'entityTypeKey') AND x.version = 0;
END
$$;
