-- The record of migration 025 for the history written before it, in a transaction of its own (reading
-- `aspects` here takes no lock that stops writes). Rows moved into history since 025 have their record
-- from its trigger already, which the backfill leaves as it is (ON CONFLICT DO NOTHING).
-- History written before migration 025 has no record: each of its properties is taken as written
-- under the version its definition had when the row was written (the definition row current at the
-- row's created_on), '' when none had one then.
INSERT INTO structured_property_assignment_history (entity_urn, aspect_version, property_urn, definition_version)
  SELECT DISTINCT ON (h.urn, h.version, e ->> 'propertyUrn') h.urn, h.version, e ->> 'propertyUrn',
         coalesce((SELECT d.metadata ->> 'version' FROM aspects d
                    WHERE d.urn = e ->> 'propertyUrn' AND d.aspect = 'propertyDefinition' AND d.created_on <= h.created_on
                    ORDER BY d.created_on DESC, d.version = 0 DESC, d.version DESC LIMIT 1), '')
    FROM aspects h,
         json_array_elements(CASE WHEN json_typeof(h.metadata -> 'properties') = 'array' THEN h.metadata -> 'properties' ELSE '[]' END) AS e
   WHERE h.aspect = 'structuredProperties' AND h.version <> 0 AND e ->> 'propertyUrn' IS NOT NULL
  ON CONFLICT DO NOTHING;
