-- Checked writes row by row: the form of svc_write_checked (R__svc_write_checked.sql) for the batches
-- its set-wise form does not take (a CREATE mode, an entity written twice, a guard on another row's
-- entity), where a row must see what the rows before it wrote. Same arguments, same answers.
--
-- Each row may name the state its writer read and relied on; the row is written only if that state
-- still holds, under the locks that keep it so until the commit:
--  * p_expected[i], when p_checked[i]: the aspect's latest row as read, `<metadata> <system_metadata>`
--    (NULL: absent). Every write changes system metadata (lastObserved), so any write in between shows.
--  * guards: rows of other aspects (p_guard_rows says which row each guard belongs to) whose latest
--    metadata must still be p_guard_texts (NULL: absent), e.g. the definitions a structured-property
--    write was validated against. Their URNs are locked shared, in lock order, after the entities the
--    statement writes (locked exclusive, in lock order): a write waiting for an entity holds no lock on
--    what it references, so a definition write never waits behind a value write stuck on an entity
--    (db/locks.ts).
-- A row whose state changed is reported 'stale:<reason>' and writes nothing; its writer reads again.
-- Otherwise the row is written by svc_write_aspect_row, whose answer it reports. p_atomic: the rows are
-- one all-or-nothing write, so a stale row or a failed precondition raises (SQLSTATE SV409 / SV412,
-- db/pool.ts) instead. Callers pass the rows in URN order.
CREATE OR REPLACE FUNCTION svc_write_checked_rows(
  p_atomic boolean,
  p_urns text[], p_aspects text[], p_key_aspects text[], p_keys json[], p_system_metadata jsonb[], p_actors text[], p_modes text[],
  p_checked boolean[], p_expected text[],
  p_guard_rows int[], p_guard_urns text[], p_guard_aspects text[], p_guard_texts text[],
  VARIADIC p_metadata json[]
) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  outcomes text[] := '{}';
  outcome text;
  stored text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_urns) AS w(u)) d ORDER BY u COLLATE "C";
  -- (A guarded URN the statement writes itself is already locked exclusive.)
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_guard_urns) AS g(u) WHERE u <> ALL (p_urns)) d ORDER BY u COLLATE "C";
  FOR i IN 1 .. cardinality(p_urns) LOOP
    outcome := NULL;
    IF p_checked[i] THEN
      SELECT metadata::text || ' ' || system_metadata::text INTO stored
        FROM aspects WHERE urn = p_urns[i] AND aspect = p_aspects[i] AND version = 0;
      IF stored IS DISTINCT FROM p_expected[i] THEN
        outcome := 'stale:' || p_aspects[i] || ' of ' || p_urns[i] || ' was written meanwhile';
      END IF;
    END IF;
    IF outcome IS NULL THEN
      FOR g IN 1 .. coalesce(cardinality(p_guard_rows), 0) LOOP
        CONTINUE WHEN p_guard_rows[g] <> i;
        IF (SELECT metadata::text FROM aspects WHERE urn = p_guard_urns[g] AND aspect = p_guard_aspects[g] AND version = 0)
             IS DISTINCT FROM p_guard_texts[g] THEN
          outcome := 'stale:' || p_guard_aspects[g] || ' of ' || p_guard_urns[g] || ' changed meanwhile';
          EXIT;
        END IF;
      END LOOP;
    END IF;
    IF outcome IS NULL THEN
      outcome := svc_write_aspect_row(p_urns[i], p_aspects[i], p_key_aspects[i], p_keys[i], p_metadata[i],
                                      p_system_metadata[i], p_actors[i], p_modes[i]);
    END IF;
    IF p_atomic AND outcome LIKE 'stale:%' THEN
      RAISE EXCEPTION '%', substr(outcome, 7) USING ERRCODE = 'SV409';
    END IF;
    IF p_atomic AND outcome LIKE 'precondition:%' THEN
      RAISE EXCEPTION '%', substr(outcome, 14) USING ERRCODE = 'SV412';
    END IF;
    outcomes := array_append(outcomes, outcome);
  END LOOP;
  RETURN outcomes;
END
$$;
