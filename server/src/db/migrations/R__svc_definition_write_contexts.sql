-- What propertyDefinition writes read before their checked write, for several properties at once,
-- without locks (properties/propertyStore.ts, loadDefinitionContexts): `s` the stored definition of
-- each, `st` its status row, `h` the properties whose definition holds a name sharing a field with one
-- of the names, `t` the open hard-delete cleanups (p_cleanup_kind) of the properties or of such a name,
-- `d` and `e` the key rows of the data types and of the entity types. A write creating a property does
-- so under its qualified name's lock, taken by the caller.
--
-- A structured property's unversioned search field is its qualified name with `.` replaced by `_`
-- (DataHub's name), so two names that differ only by `.` vs `_` (`col.a_b`, `col_a.b`) would share one
-- field: the holders are looked up by field (the index property_field_names finds the definitions; open
-- tasks are few), soft-deleted ones included (a restore brings their values back).
--
-- One generic plan per connection, lookups by URN with `version <= 0` (see
-- R__svc_property_write_contexts.sql); lookups by name keep `version = 0`, which their expression
-- indexes need.
CREATE OR REPLACE FUNCTION svc_definition_write_contexts(p_urns text[], p_names text[], p_cleanup_kind text)
RETURNS TABLE (kind text, urn text, a text, b text, c text, at timestamptz, id bigint, done bigint, total bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
  fields text[] := ARRAY(SELECT replace(n, '.', '_') FROM unnest(p_names) AS n);
BEGIN
  RETURN QUERY
  SELECT 's', x.urn, x.created_by, x.metadata::text, x.system_metadata::text, x.created_on, NULL::bigint, NULL::bigint, NULL::bigint
    FROM aspects x WHERE x.aspect = 'propertyDefinition' AND x.urn = ANY (p_urns) AND x.version <= 0
  UNION ALL
  SELECT 'st', x.urn, NULL, x.metadata::text, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect = 'status' AND x.urn = ANY (p_urns) AND x.version <= 0
  UNION ALL
  SELECT 'h', x.urn, (x.metadata::jsonb) ->> 'qualifiedName', NULL, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect = 'propertyDefinition' AND x.version = 0 AND replace((x.metadata::jsonb) ->> 'qualifiedName', '.', '_') = ANY (fields)
  UNION ALL
  SELECT 't', t.subject, t.params ->> 'qualifiedName', NULL, NULL, NULL, t.id, t.done, t.total
    FROM tasks t WHERE t.state IN ('PENDING', 'RUNNING') AND t.kind = p_cleanup_kind
     AND (t.subject = ANY (p_urns) OR replace(t.params ->> 'qualifiedName', '.', '_') = ANY (fields))
  UNION ALL
  SELECT CASE x.aspect WHEN 'dataTypeKey' THEN 'd' ELSE 'e' END, x.urn, NULL, x.metadata::text, NULL, NULL, NULL, NULL, NULL
    FROM aspects x WHERE x.aspect IN ('dataTypeKey', 'entityTypeKey') AND x.version = 0;
END
$$;
