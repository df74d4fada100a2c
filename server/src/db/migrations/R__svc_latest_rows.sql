-- The latest rows of given entities (of every pair of p_urns × p_aspects that has one; or every aspect
-- of the given entities), each found by key whatever the planner knows of the tables
-- (entities/aspectStore.ts latestAspects, properties/propertyStore.ts).
--
-- Written with `version = 0`, such a lookup can be served by the primary key or by the partial index of
-- latest rows by aspect (aspects_latest_by_aspect). Before any ANALYZE had seen a freshly loaded catalog
-- (autovacuum comes a minute or more later), the planner estimated one row per aspect and chose the
-- latter with the aspect as its only key, filtering every entity of that aspect by URN: a
-- structured-property write read the rows of all 5,000 datasets of a fresh load (15 ms instead of 0.1).
-- `version <= 0` selects the same rows (versions start at 0, the latest), but the planner cannot prove
-- that index's predicate from it: the primary key (urn, aspect, version) is left, with the URNs as its
-- leading condition, an exact lookup. (Probing each pair in a nested loop, also exact, made
-- structured-property writes about 10% slower on analyzed tables.) test/server/plan-stability.test.ts
-- checks the plans.
CREATE OR REPLACE FUNCTION svc_latest_rows(p_urns text[], p_aspects text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT * FROM aspects WHERE urn = ANY (p_urns) AND aspect = ANY (p_aspects) AND version <= 0
$$;

CREATE OR REPLACE FUNCTION svc_latest_rows(p_urns text[])
RETURNS SETOF aspects LANGUAGE sql STABLE AS $$
  SELECT * FROM aspects WHERE urn = ANY (p_urns) AND version <= 0
$$;
