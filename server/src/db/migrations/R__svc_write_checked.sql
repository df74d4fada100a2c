-- The write statement of every aspect write (entities/writeStatement.ts, writeAspects): a batch of rows,
-- each checked against the state its writer relied on, written in one statement so that they commit
-- together. Callers pass the rows in URN order.
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
-- p_atomic: the rows are one all-or-nothing write, so a stale row or a failed precondition raises
-- (SQLSTATE SV409 / SV412, db/pool.ts) instead.
--
-- Two ways to write the batch, with the same answers:
--
-- Row by row, each row by svc_write_aspect_row (whose answer it reports), where a row must see what the
-- rows before it wrote: a CREATE mode, an aspect written twice, an entity written twice unless the
-- batch is atomic, a guard on an entity the batch writes another row of, an entity's key aspect written
-- after another aspect of it. (The setting `svc.write_row_by_row = on` sends every batch this way: a
-- switch for diagnosis, and how test/server/mechanisms/write-batches.test.ts compares the two.)
--
-- Set-wise, every other batch: upserts to distinct entities (what the group commit sends), or an
-- atomic batch of distinct aspects of a few entities (an ingestion batch: DataHub's clients send several
-- aspects of each entity, its key among them), one statement per kind of change instead of about ten
-- statements per row (a batch of 100 proposals of 13 datasets: 1.4 s of Postgres instead of 6.3–7.2 s
-- for 200 batches; docs/performance.md, the ingestion benchmark):
--  1. One statement classifies every row against the state it finds: stale (its own aspect or a guard
--     changed, the first such reason in the row-by-row order), created, unchanged or updated, with the
--     version number the latest row gets in history. A value given again is found unchanged by its
--     text first (svc writes the text it serializes, the same for the same value); only texts that
--     differ are compared as jsonb.
--  2. With p_atomic, the first stale row raises SV409.
--  3. Only the statements the batch has rows for run: unchanged rows get their new system metadata;
--     updated rows' latest rows move into history; new entities get their key aspect; created and
--     updated rows are inserted as latest (their statement triggers queue search and record
--     assignments once for the whole batch).
--
-- Every statement finds its rows by key (nested loops over the batch; no sequential scan, hash or merge
-- join), whatever the tables held when the connection planned it. The values are read with unnest, not
-- subscripted per row: `p_metadata[i]` in a statement copied the values around (six-row batches of 1 KB
-- values ran 25% slower than row by row). test/server/plan-stability.test.ts checks the plans;
-- test/server/mechanisms/write-batches.test.ts that both ways answer alike.
CREATE OR REPLACE FUNCTION svc_write_checked(
  p_atomic boolean,
  p_urns text[], p_aspects text[], p_key_aspects text[], p_keys json[], p_system_metadata jsonb[], p_actors text[], p_modes text[],
  p_checked boolean[], p_expected text[],
  p_guard_rows int[], p_guard_urns text[], p_guard_aspects text[], p_guard_texts text[],
  VARIADIC p_metadata json[]
) RETURNS text[] LANGUAGE plpgsql
  SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
  kinds text[];
  versions bigint[];
  first_stale text;
  keyed text[];
  outcomes text[] := '{}';
  outcome text;
  stored text;
BEGIN
  -- Locks first, either way: the entities written (exclusive), then the guarded ones (shared), in URN
  -- order. (A guarded URN the statement writes itself is already locked exclusive.)
  PERFORM pg_advisory_xact_lock(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_urns) AS w(u)) d ORDER BY u COLLATE "C";
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_guard_urns) AS g(u) WHERE u <> ALL (p_urns)) d ORDER BY u COLLATE "C";

  IF current_setting('svc.write_row_by_row', true) = 'on'
     OR EXISTS (SELECT FROM unnest(p_modes) m WHERE m <> 'upsert')
     -- (Distinct entities, checked when not atomic, are distinct aspects too. An aspect's name has no
     -- space: `urn aspect` names one pair, and text sorts faster than a record.)
     OR (p_atomic AND (SELECT count(DISTINCT u || ' ' || a) FROM unnest(p_urns, p_aspects) w(u, a)) <> cardinality(p_urns))
     OR (NOT p_atomic AND (SELECT count(DISTINCT u) FROM unnest(p_urns) u) <> cardinality(p_urns))
     OR EXISTS (SELECT FROM unnest(p_guard_rows, p_guard_urns) g(r, u)
                 WHERE u = ANY (p_urns) AND (u <> p_urns[r] OR (SELECT count(*) FROM unnest(p_urns) x(v) WHERE x.v = u) > 1))
     OR EXISTS (SELECT FROM unnest(p_urns, p_aspects, p_key_aspects) WITH ORDINALITY k(u, a, ka, i)
                 WHERE k.a = k.ka AND EXISTS (SELECT FROM unnest(p_urns) WITH ORDINALITY o(v, j) WHERE o.v = k.u AND o.j < k.i)) THEN
    -- Row by row.
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
  END IF;

  -- Set-wise.
  SELECT array_agg(c.kind ORDER BY c.i), array_agg(c.next_version ORDER BY c.i) INTO kinds, versions
    FROM (
      SELECT w.i,
        CASE
          WHEN p_checked[w.i] AND x.stored IS DISTINCT FROM p_expected[w.i]
            THEN 'stale:' || w.aspect || ' of ' || w.urn || ' was written meanwhile'
          ELSE coalesce(
            (SELECT 'stale:' || g.a || ' of ' || g.u || ' changed meanwhile'
               FROM unnest(p_guard_rows, p_guard_urns, p_guard_aspects, p_guard_texts) WITH ORDINALITY AS g(r, u, a, t, n)
              WHERE g.r = w.i
                AND (SELECT y.metadata::text FROM aspects y WHERE y.urn = g.u AND y.aspect = g.a AND y.version = 0) IS DISTINCT FROM g.t
              ORDER BY g.n LIMIT 1),
            CASE WHEN x.metadata IS NULL THEN 'created'
                 WHEN x.metadata::text = w.md::text
                   OR (octet_length(x.metadata::text) = octet_length(w.md::text) AND x.metadata::jsonb = w.md::jsonb) THEN 'unchanged'
                 ELSE 'updated' END)
        END AS kind,
        -- The latest is the aspect's next_version-th version (history holds 1 .. next_version - 1).
        CASE WHEN x.metadata IS NULL THEN 0
             ELSE (SELECT max(h.version) + 1 FROM aspects h WHERE h.urn = w.urn AND h.aspect = w.aspect) END AS next_version
        FROM unnest(p_urns, p_aspects, p_metadata) WITH ORDINALITY AS w(urn, aspect, md, i)
        LEFT JOIN LATERAL (
          SELECT a.metadata, CASE WHEN p_checked[w.i] THEN a.metadata::text || ' ' || a.system_metadata::text END AS stored
            FROM aspects a WHERE a.urn = w.urn AND a.aspect = w.aspect AND a.version = 0
        ) x ON true
    ) c;

  IF p_atomic THEN
    SELECT k INTO first_stale FROM unnest(kinds) WITH ORDINALITY AS s(k, i) WHERE k LIKE 'stale:%' ORDER BY i LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION '%', substr(first_stale, 7) USING ERRCODE = 'SV409';
    END IF;
  END IF;

  IF 'unchanged' = ANY (kinds) THEN
    UPDATE aspects a SET system_metadata = w.sm
      FROM unnest(p_urns, p_aspects, kinds, p_system_metadata) AS w(urn, aspect, kind, sm)
     WHERE w.kind = 'unchanged' AND a.urn = w.urn AND a.aspect = w.aspect AND a.version = 0;
  END IF;
  IF 'updated' = ANY (kinds) THEN
    UPDATE aspects a SET version = w.v
      FROM unnest(p_urns, p_aspects, kinds, versions) AS w(urn, aspect, kind, v)
     WHERE w.kind = 'updated' AND a.urn = w.urn AND a.aspect = w.aspect AND a.version = 0;
  END IF;
  IF 'created' = ANY (kinds) THEN
    -- A new aspect of an entity that may be new: its key aspect goes with it, from the entity's first
    -- such row (as row by row), unless the batch writes the key itself (then first: see the hand-over).
    -- The entities whose key the batch writes are listed once, not looked for row by row in the batch.
    keyed := ARRAY(SELECT k.u FROM unnest(p_urns, p_aspects, p_key_aspects) AS k(u, a, ka) WHERE k.a = k.ka);
    INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
      SELECT w.urn, w.key_aspect, 0, w.key, w.sm, w.actor
        FROM unnest(p_urns, p_aspects, kinds, p_key_aspects, p_keys, p_system_metadata, p_actors) WITH ORDINALITY AS w(urn, aspect, kind, key_aspect, key, sm, actor, i)
       WHERE w.kind = 'created' AND w.aspect <> w.key_aspect AND w.urn <> ALL (keyed)
       ORDER BY w.i
      ON CONFLICT DO NOTHING;
  END IF;
  IF kinds && ARRAY['created', 'updated'] THEN
    INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
      SELECT w.urn, w.aspect, 0, w.md, w.sm, w.actor
        FROM unnest(p_urns, p_aspects, kinds, p_metadata, p_system_metadata, p_actors) WITH ORDINALITY AS w(urn, aspect, kind, md, sm, actor, i)
       WHERE w.kind IN ('created', 'updated')
       ORDER BY w.i;
  END IF;

  RETURN ARRAY(
    SELECT CASE s.kind WHEN 'created' THEN 'created:1'
                       WHEN 'updated' THEN 'updated:' || (versions[s.i] + 1)
                       WHEN 'unchanged' THEN 'unchanged:' || versions[s.i]
                       ELSE s.kind END
      FROM unnest(kinds) WITH ORDINALITY AS s(kind, i) ORDER BY s.i);
END
$$;
