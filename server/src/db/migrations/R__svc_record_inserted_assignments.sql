-- The record of assignments (the rule of R__svc_record_assignments.sql) for inserted rows: each
-- inserted latest structuredProperties row gets the record its value names (the properties it names,
-- each under its definition's version now; no other row for the entity). Given the rows of a whole
-- statement at once by svc_aspects_inserted (R__svc_aspects_inserted.sql), not row by row: a write
-- statement inserts the rows of a whole group commit (R__svc_write_checked.sql).
-- test/server/mechanisms/set-wise-triggers.test.ts checks the result; test/server/plan-stability.test.ts
-- that its delete finds the entities' rows by key.
CREATE OR REPLACE FUNCTION svc_record_inserted_assignments(entities text[], latest_values json[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
BEGIN
  WITH latest AS (
    SELECT * FROM unnest(entities, latest_values) AS l(urn, metadata)
  ), named AS (
    SELECT DISTINCT l.urn AS entity_urn, e ->> 'propertyUrn' AS property_urn
      FROM latest l, json_array_elements(l.metadata -> 'properties') e
  ), unnamed AS (
    -- By the entities as an array, an index condition: a join with the statement's rows (estimated
    -- at one row) was planned as a walk of the whole record.
    DELETE FROM structured_property_assignments a
     WHERE a.entity_urn = ANY (entities)
       AND NOT EXISTS (SELECT FROM named n WHERE n.entity_urn = a.entity_urn AND n.property_urn = a.property_urn)
  )
  INSERT INTO structured_property_assignments (entity_urn, property_urn, definition_version)
    SELECT n.entity_urn, n.property_urn,
           coalesce((SELECT d.metadata ->> 'version' FROM aspects d
                      WHERE d.urn = n.property_urn AND d.aspect = 'propertyDefinition' AND d.version = 0), '')
      FROM named n ORDER BY n.entity_urn, n.property_urn
    ON CONFLICT (entity_urn, property_urn) DO UPDATE SET definition_version = excluded.definition_version
      WHERE structured_property_assignments.definition_version <> excluded.definition_version;
END
$$;
