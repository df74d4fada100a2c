-- Group commit: single-aspect writes that arrive together share one statement and one commit
-- (see server/src/entities/writeBatcher.ts). The logic of svc_write_aspect moves into
-- svc_write_aspect_row, which reports a failed CREATE precondition as its outcome instead of raising
-- it, so one row's failure does not undo the other rows of its batch. It returns 'created',
-- 'updated', 'unchanged', or 'precondition:<message>' (nothing was written for that row).
CREATE FUNCTION svc_write_aspect_row(
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
      RETURN 'precondition:Cannot perform CREATE since the aspect already exists.';
    END IF;
    IF p_mode = 'create_entity' THEN
      RETURN 'precondition:Cannot perform CREATE_ENTITY if not exists since the entity key already exists.';
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
      RETURN 'precondition:Cannot perform CREATE_ENTITY if not exists since the entity key already exists.';
    END IF;
  END IF;
  INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
    VALUES (p_urn, p_aspect, 0, p_metadata, p_system_metadata, p_actor);
  RETURN 'created';
END
$$;

-- One write, a failed precondition raised as SQLSTATE SV412 (inside transactions, where it must undo
-- the whole transaction).
CREATE OR REPLACE FUNCTION svc_write_aspect(
  p_urn text, p_aspect text, p_key_aspect text, p_key json,
  p_metadata json, p_system_metadata jsonb, p_actor text, p_mode text
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  outcome text := svc_write_aspect_row(p_urn, p_aspect, p_key_aspect, p_key, p_metadata, p_system_metadata, p_actor, p_mode);
BEGIN
  IF outcome LIKE 'precondition:%' THEN
    RAISE EXCEPTION '%', substr(outcome, 14) USING ERRCODE = 'SV412';
  END IF;
  RETURN outcome;
END
$$;

-- A batch of writes in the given order, in the caller's transaction (one statement: one commit);
-- returns the rows' outcomes in that order. Callers sort the rows by URN, so two batches take their
-- entities' locks in the same order and never deadlock.
CREATE FUNCTION svc_write_aspects(
  p_urns text[], p_aspects text[], p_key_aspects text[], p_keys json[],
  p_metadata json[], p_system_metadata jsonb[], p_actors text[], p_modes text[]
) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  outcomes text[] := '{}';
BEGIN
  FOR i IN 1 .. cardinality(p_urns) LOOP
    outcomes := array_append(outcomes, svc_write_aspect_row(p_urns[i], p_aspects[i], p_key_aspects[i],
      p_keys[i], p_metadata[i], p_system_metadata[i], p_actors[i], p_modes[i]));
  END LOOP;
  RETURN outcomes;
END
$$;
