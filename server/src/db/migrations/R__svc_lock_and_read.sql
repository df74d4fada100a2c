-- Takes an entity's lock and returns the latest row of one of its aspects, in one round trip
-- (entities/aspectStore.ts, lockAndRead): the read of a write under lock, which must see the last
-- committed state of what it changes and keep it so until its commit. plpgsql, so that the SELECT
-- runs after the lock with a fresh snapshot. An entity's lock is the advisory lock
-- hashtextextended(urn, 0) (db/locks.ts).
CREATE OR REPLACE FUNCTION svc_lock_and_read(p_urn text, p_aspect text)
RETURNS TABLE (urn text, aspect text, version bigint, metadata json, system_metadata jsonb, created_on timestamptz, created_by text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_urn, 0));
  RETURN QUERY SELECT a.urn::text, a.aspect, a.version, a.metadata, a.system_metadata, a.created_on, a.created_by
    FROM aspects a WHERE a.urn = p_urn AND a.aspect = p_aspect AND a.version = 0;
END
$$;
