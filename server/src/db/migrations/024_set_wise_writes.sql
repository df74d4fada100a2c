-- Checked writes set-wise: a batch of upserts to distinct entities is written with one statement per
-- kind of change instead of about ten statements per row. Each row's outcome, each check and each
-- version number are those of the row-by-row write of migrations 006 and 009, which stays for every
-- other batch (a CREATE mode, an entity written twice, a guard on another row's entity): there a row
-- must see what the rows before it wrote.
--
--  1. Locks, as before: the entities written (exclusive), then the guarded ones (shared), in URN order.
--  2. One statement classifies every row against the state it finds: stale (its own aspect or a guard
--     changed, the first such reason in the row-by-row order), created, unchanged or updated, with the
--     version number the latest row gets in history.
--  3. With p_atomic, the first stale row raises SV409, as the row-by-row write does.
--  4. Unchanged rows get their new system metadata; updated rows' latest rows move into history; new
--     entities get their key aspect; created and updated rows are inserted as latest.
--
-- Every statement finds its rows by key (nested loops over the batch; no sequential scan, hash or
-- merge join), whatever the tables held when the connection planned it.
--
-- The values (and the other arrays a statement writes) are read with unnest, not subscripted per row:
-- `p_metadata[i]` in a statement copied the values around, and six-row batches of 1 KB values ran 25%
-- slower than row by row.
--
-- `pgbench`, six-row batches, four clients: structured-property sets (every trigger, three guards a
-- row) 1,015 to 1,025 batches/s row by row, 1,155 to 1,236 set-wise; 1 KB datasetProperties updates
-- (no trigger) 1,446 to 1,487 row by row, 1,309 to 1,331 set-wise.
ALTER FUNCTION svc_write_checked(boolean, text[], text[], text[], json[], jsonb[], text[], text[], boolean[], text[], int[], text[], text[], text[], json[])
  RENAME TO svc_write_checked_rows;

CREATE FUNCTION svc_write_checked(
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
BEGIN
  IF EXISTS (SELECT FROM unnest(p_modes) m WHERE m <> 'upsert')
     OR (SELECT count(DISTINCT u) FROM unnest(p_urns) u) <> cardinality(p_urns)
     OR EXISTS (SELECT FROM unnest(p_guard_rows, p_guard_urns) g(r, u) WHERE u <> p_urns[r] AND u = ANY (p_urns)) THEN
    RETURN svc_write_checked_rows(p_atomic, p_urns, p_aspects, p_key_aspects, p_keys, p_system_metadata, p_actors, p_modes,
                                  p_checked, p_expected, p_guard_rows, p_guard_urns, p_guard_aspects, p_guard_texts,
                                  VARIADIC p_metadata);
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_urns) AS w(u)) d ORDER BY u COLLATE "C";
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(u, 0))
    FROM (SELECT DISTINCT u FROM unnest(p_guard_urns) AS g(u) WHERE u <> ALL (p_urns)) d ORDER BY u COLLATE "C";

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
                 WHEN octet_length(x.metadata::text) = octet_length(w.md::text) AND x.metadata::jsonb = w.md::jsonb THEN 'unchanged'
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

  UPDATE aspects a SET system_metadata = w.sm
    FROM unnest(p_urns, p_aspects, kinds, p_system_metadata) AS w(urn, aspect, kind, sm)
   WHERE w.kind = 'unchanged' AND a.urn = w.urn AND a.aspect = w.aspect AND a.version = 0;
  UPDATE aspects a SET version = w.v
    FROM unnest(p_urns, p_aspects, kinds, versions) AS w(urn, aspect, kind, v)
   WHERE w.kind = 'updated' AND a.urn = w.urn AND a.aspect = w.aspect AND a.version = 0;
  -- A new aspect of an entity that may be new: its key aspect goes with it.
  INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
    SELECT w.urn, w.key_aspect, 0, w.key, w.sm, w.actor
      FROM unnest(p_urns, p_aspects, kinds, p_key_aspects, p_keys, p_system_metadata, p_actors) AS w(urn, aspect, kind, key_aspect, key, sm, actor)
     WHERE w.kind = 'created' AND w.aspect <> w.key_aspect
    ON CONFLICT DO NOTHING;
  INSERT INTO aspects (urn, aspect, version, metadata, system_metadata, created_by)
    SELECT w.urn, w.aspect, 0, w.md, w.sm, w.actor
      FROM unnest(p_urns, p_aspects, kinds, p_metadata, p_system_metadata, p_actors) WITH ORDINALITY AS w(urn, aspect, kind, md, sm, actor, i)
     WHERE w.kind IN ('created', 'updated')
     ORDER BY w.i;

  RETURN ARRAY(
    SELECT CASE s.kind WHEN 'created' THEN 'created:1'
                       WHEN 'updated' THEN 'updated:' || (versions[s.i] + 1)
                       WHEN 'unchanged' THEN 'unchanged:' || versions[s.i]
                       ELSE s.kind END
      FROM unnest(kinds) WITH ORDINALITY AS s(kind, i) ORDER BY s.i);
END
$$;
