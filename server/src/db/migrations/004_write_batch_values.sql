-- Cheaper group-commit batches (see server/src/entities/writeBatcher.ts):
--  * svc_write_aspects takes the aspect values as separate json arguments (VARIADIC) instead of one
--    json[] array. In an array parameter the driver escapes every value character by character and
--    Postgres reads it back the same way; a value of its own is sent and checked as it is.
--  * A write whose stored value has a different size than the new one is a change, without
--    parsing both as jsonb to compare them: svc writes every value as compact JSON
--    (JSON.stringify), in which equal values have equal sizes. Equal sizes are still compared as
--    jsonb (keys may come in another order). octet_length reads the size from the value's header.
CREATE OR REPLACE FUNCTION svc_write_aspect_row(
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
    IF octet_length(current::text) = octet_length(p_metadata::text) AND current::jsonb = p_metadata::jsonb THEN
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

DROP FUNCTION svc_write_aspects(text[], text[], text[], json[], json[], jsonb[], text[], text[]);

-- A batch of writes in the given order, in the caller's transaction (one statement: one commit);
-- returns the rows' outcomes in that order. Row i's value is the i-th of p_metadata. Callers sort
-- the rows by URN, so two batches take their entities' locks in the same order and never deadlock.
CREATE FUNCTION svc_write_aspects(
  p_urns text[], p_aspects text[], p_key_aspects text[], p_keys json[],
  p_system_metadata jsonb[], p_actors text[], p_modes text[], VARIADIC p_metadata json[]
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
