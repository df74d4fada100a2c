-- One row per value of a structured property on an entity, kept in the same transaction as the
-- entity's structuredProperties aspect. It records the definition version each assignment was
-- written under, drives the cleanup after a hard delete or a versioned change from the primary
-- store, and is the Postgres search backend's index of property values.
CREATE TABLE structured_property_values (
  urn                text COLLATE "C" NOT NULL,
  property_urn       text COLLATE "C" NOT NULL,
  definition_version text NOT NULL DEFAULT '',
  value_index        int NOT NULL,
  string_value       text,
  number_value       double precision,
  PRIMARY KEY (urn, property_urn, value_index)
);
CREATE INDEX spv_by_property_number ON structured_property_values (property_urn, number_value, urn);
CREATE INDEX spv_by_property_string ON structured_property_values (property_urn, string_value, urn);

-- A qualified name belongs to one structured property: looked up on every definition write.
CREATE INDEX property_qualified_names ON aspects (((metadata::jsonb) ->> 'qualifiedName'))
  WHERE aspect = 'propertyDefinition' AND version = 0;

-- Durable background work (value cleanup after a hard delete or a version change, ...): queued in
-- the transaction of the write that causes it, claimed with a lease (renewed while it runs; every
-- update names the claim, so a runner that lost its lease cannot overwrite its successor) so a task of
-- a killed server is picked up again, retried with backoff after a failure, observable via /api/tasks.
CREATE TABLE tasks (
  id           bigserial PRIMARY KEY,
  kind         text NOT NULL,
  subject      text NOT NULL,
  params       jsonb NOT NULL DEFAULT '{}',
  state        text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'RUNNING', 'SUCCEEDED')),
  total        bigint,
  done         bigint NOT NULL DEFAULT 0,
  error        text,
  attempts     int NOT NULL DEFAULT 0,
  failures     int NOT NULL DEFAULT 0,
  claim_id     uuid,
  lease_until  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX tasks_open ON tasks (created_at) WHERE state IN ('PENDING', 'RUNNING');
CREATE INDEX tasks_by_subject ON tasks (subject, created_at DESC);

-- Replaces the value rows of one entity in one round trip (structuredProperties writes are hot).
-- Planned on every call: a plan cached while the table was nearly empty (a fresh install) would keep
-- scanning the whole table after it grew, until the next autoanalyze.
CREATE FUNCTION svc_replace_property_values(
  p_urn text, p_properties text[], p_versions text[], p_indexes int[], p_strings text[], p_numbers float8[]
) RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  DELETE FROM structured_property_values WHERE urn = p_urn;
  INSERT INTO structured_property_values (urn, property_urn, definition_version, value_index, string_value, number_value)
    SELECT p_urn, u.* FROM unnest(p_properties, p_versions, p_indexes, p_strings, p_numbers) AS u;
END
$$;
