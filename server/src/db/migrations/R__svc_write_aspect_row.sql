-- One aspect write, row by row (called by svc_write_checked for each row of a batch it writes row by row): takes the
-- entity's lock, creates the key aspect when the entity is new, keeps the replaced latest row as
-- history (versions 1..n-1, DataHub's numbering), and holds the CREATE preconditions (DataHub's words,
-- entities/writeStatement.ts reads them into reasons).
--
-- p_mode: 'upsert' | 'create' (the aspect must not exist) | 'create_entity' (the entity must not exist).
-- Returns the outcome and the version number of the aspect it leaves latest: 'created:1',
-- 'updated:<n>', 'unchanged:<n>' (the same value: only its system metadata is written; the aspect's
-- n-th version, history holding 1 .. n-1), or 'precondition:<message>' (nothing written for the row).
-- A failed precondition is reported, not raised, so that one row's failure does not undo the others of
-- its batch.
--
-- A value whose stored text has another size than the new one is a change, without reading both as
-- jsonb: svc writes every value as compact JSON, in which equal values have equal sizes (equal sizes
-- are still compared as jsonb: keys may come in another order).
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
    -- The latest is the aspect's next_version-th version (history holds 1 .. next_version - 1).
    SELECT coalesce(max(version), 0) + 1 INTO next_version FROM aspects WHERE urn = p_urn AND aspect = p_aspect;
    IF octet_length(current::text) = octet_length(p_metadata::text) AND current::jsonb = p_metadata::jsonb THEN
      UPDATE aspects SET system_metadata = p_system_metadata
        WHERE urn = p_urn AND aspect = p_aspect AND version = 0;
      RETURN 'unchanged:' || next_version;
    END IF;
    UPDATE aspects SET version = next_version WHERE urn = p_urn AND aspect = p_aspect AND version = 0;
    INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
      VALUES (p_urn, p_aspect, 0, p_metadata, p_system_metadata, p_actor);
    RETURN 'updated:' || next_version + 1;
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
  RETURN 'created:1';
END
$$;
