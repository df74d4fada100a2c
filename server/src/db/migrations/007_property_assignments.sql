-- structured_property_values was two things: the domain's record of which definition version each
-- value was written under, and a start of a search index (values and their btree indexes). It is the
-- first: the record of structured property assignments, one row per property set on an entity, kept
-- in the transaction of the entity's structuredProperties write. It drives the cleanups after a hard
-- delete or a versioned change, and hides values written under an older version. Search keeps its own
-- index (both backends), fed by the search outbox.
CREATE TABLE structured_property_assignments (
  entity_urn         text COLLATE "C" NOT NULL,
  property_urn       text COLLATE "C" NOT NULL,
  -- The definition's version when the values were written ('' for a property without a version).
  definition_version text NOT NULL DEFAULT '',
  PRIMARY KEY (entity_urn, property_urn)
);
-- The cleanups walk the entities holding a property, in URN order.
CREATE INDEX assignments_by_property ON structured_property_assignments (property_urn, entity_urn);

INSERT INTO structured_property_assignments (entity_urn, property_urn, definition_version)
  SELECT DISTINCT ON (urn, property_urn) urn, property_urn, definition_version
    FROM structured_property_values ORDER BY urn, property_urn, value_index;

DROP FUNCTION svc_replace_property_values(text, text[], text[], int[], text[], float8[]);
DROP TABLE structured_property_values;

-- Makes the assignments of one entity those given: the others go, the given ones are inserted or get
-- their version. Planned on every call: a plan cached while the table was nearly empty (a fresh
-- install) would keep scanning the whole table after it grew, until the next autoanalyze.
CREATE FUNCTION svc_replace_assignments(p_entity text, p_properties text[], p_versions text[])
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  DELETE FROM structured_property_assignments WHERE entity_urn = p_entity AND property_urn <> ALL (p_properties);
  INSERT INTO structured_property_assignments (entity_urn, property_urn, definition_version)
    SELECT p_entity, u.property, u.version FROM unnest(p_properties, p_versions) AS u(property, version)
    ON CONFLICT (entity_urn, property_urn) DO UPDATE SET definition_version = excluded.definition_version
      WHERE structured_property_assignments.definition_version <> excluded.definition_version;
END
$$;
