-- Makes the record of assignments of one entity those given: the others go, the given ones are
-- inserted or get their version (rows already right are not touched). Called by the record's row
-- trigger (R__svc_record_assignments.sql) when a latest structuredProperties row is updated in place.
--
-- One generic plan per connection, with sequential scans off: a plan stays lookups by key whatever the
-- table held when it was made (a plan made on a nearly empty table, as on a fresh install, would keep
-- scanning the whole table after it grew), and planning its two statements on every call cost more
-- than running them. test/server/plan-stability.test.ts checks the plans.
CREATE OR REPLACE FUNCTION svc_replace_assignments(p_entity text, p_properties text[], p_versions text[])
RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  DELETE FROM structured_property_assignments WHERE entity_urn = p_entity AND property_urn <> ALL (p_properties);
  INSERT INTO structured_property_assignments (entity_urn, property_urn, definition_version)
    SELECT p_entity, u.property, u.version FROM unnest(p_properties, p_versions) AS u(property, version)
    ON CONFLICT (entity_urn, property_urn) DO UPDATE SET definition_version = excluded.definition_version
      WHERE structured_property_assignments.definition_version <> excluded.definition_version;
END
$$;
