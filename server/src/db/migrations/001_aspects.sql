-- Every aspect of every entity, every version kept: version 0 is the latest, older versions are
-- numbered 1..n in the order they were replaced (as DataHub's metadata_aspect_v2). Values are `json`,
-- not `jsonb`, so a read returns the fields in the order they were written.
CREATE TABLE aspects (
  urn             text COLLATE "C" NOT NULL,
  aspect          text NOT NULL,
  version         bigint NOT NULL,
  metadata        json NOT NULL,
  system_metadata jsonb NOT NULL DEFAULT '{}',
  created_on      timestamptz NOT NULL DEFAULT now(),
  created_by      text NOT NULL,
  PRIMARY KEY (urn, aspect, version)
);

-- Listing entities of a type walks the latest key aspects in URN order.
CREATE INDEX aspects_latest_by_aspect ON aspects (aspect, urn) WHERE version = 0;

-- Time series aspects (datasetProfile, operation, ...) are not versioned: one row per entry.
CREATE TABLE timeseries_aspects (
  id               bigserial PRIMARY KEY,
  entity_type      text NOT NULL,
  aspect           text NOT NULL,
  urn              text COLLATE "C" NOT NULL,
  timestamp_millis bigint NOT NULL,
  metadata         json NOT NULL,
  system_metadata  jsonb NOT NULL DEFAULT '{}',
  created_on       timestamptz NOT NULL DEFAULT now(),
  created_by       text NOT NULL
);
CREATE INDEX timeseries_by_time ON timeseries_aspects (entity_type, aspect, timestamp_millis);
CREATE INDEX timeseries_by_urn ON timeseries_aspects (urn, aspect, timestamp_millis DESC);

-- Writes one aspect in a single round trip: takes the entity's lock, creates the key aspect when the
-- entity is new, keeps the replaced version as history, and enforces the CREATE preconditions.
-- p_mode: 'upsert' | 'create' (the aspect must not exist) | 'create_entity' (the entity must not exist).
-- Returns 'created', 'updated' or 'unchanged' (same content: only system metadata is refreshed).
CREATE FUNCTION svc_write_aspect(
  p_urn text, p_aspect text, p_key_aspect text, p_key json,
  p_metadata json, p_system_metadata jsonb, p_actor text, p_mode text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  current json;
  next_version bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_urn, 0));
  SELECT metadata INTO current FROM aspects WHERE urn = p_urn AND aspect = p_aspect AND version = 0;
  IF FOUND THEN
    -- The aspect exists, so its entity does too (an entity's aspects go with its key).
    IF p_mode = 'create' THEN
      RAISE EXCEPTION 'Cannot perform CREATE since the aspect already exists.' USING ERRCODE = 'SV412';
    END IF;
    IF p_mode = 'create_entity' THEN
      RAISE EXCEPTION 'Cannot perform CREATE_ENTITY if not exists since the entity key already exists.'
        USING ERRCODE = 'SV412';
    END IF;
    IF current::jsonb = p_metadata::jsonb THEN
      UPDATE aspects SET system_metadata = p_system_metadata
        WHERE urn = p_urn AND aspect = p_aspect AND version = 0;
      RETURN 'unchanged';
    END IF;
    SELECT max(version) + 1 INTO next_version FROM aspects WHERE urn = p_urn AND aspect = p_aspect;
    UPDATE aspects SET version = next_version WHERE urn = p_urn AND aspect = p_aspect AND version = 0;
    INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
      VALUES (p_urn, p_aspect, 0, p_metadata, p_system_metadata, p_actor);
    RETURN 'updated';
  END IF;
  IF p_aspect <> p_key_aspect THEN
    INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
      VALUES (p_urn, p_key_aspect, 0, p_key, p_system_metadata, p_actor)
      ON CONFLICT DO NOTHING;
    IF p_mode = 'create_entity' AND NOT FOUND THEN
      RAISE EXCEPTION 'Cannot perform CREATE_ENTITY if not exists since the entity key already exists.'
        USING ERRCODE = 'SV412';
    END IF;
  END IF;
  INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
    VALUES (p_urn, p_aspect, 0, p_metadata, p_system_metadata, p_actor);
  RETURN 'created';
END
$$;

-- API tokens: only a SHA-256 of each token is kept.
CREATE TABLE api_tokens (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  role        text NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
  token_hash  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text NOT NULL,
  revoked_at  timestamptz
);

-- Takes the entity's lock and returns the latest row of one aspect, in one round trip. (plpgsql: the
-- SELECT runs after the lock with a fresh snapshot, so it sees the last committed write.)
CREATE FUNCTION svc_lock_and_read(p_urn text, p_aspect text)
RETURNS TABLE (urn text, aspect text, version bigint, metadata json, system_metadata jsonb, created_on timestamptz, created_by text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_urn, 0));
  RETURN QUERY SELECT a.urn::text, a.aspect, a.version, a.metadata, a.system_metadata, a.created_on, a.created_by
    FROM aspects a WHERE a.urn = p_urn AND a.aspect = p_aspect AND a.version = 0;
END
$$;
