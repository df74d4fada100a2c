-- Which entities name a given one, found by an index instead of a scan: the reverse lookups of lineage
-- (lineage/lineage.ts: the holders of lineage aspects one hop from an entity) and of references
-- (entities/deletes.ts: what a hard delete takes a reference out of) ask for the latest rows of a few
-- aspects that name a URN (entities/aspectStore.ts, latestMentioning). Scanning those rows took 62 ms
-- per lookup at 100,000 datasets (docs/decisions/0036-mentions-index.md).
--
-- svc_mentioning_aspect lists the aspects that may name other entities: those of REFERENCE_RULES
-- (entities/references.ts) and of LINEAGE_ASPECTS (lineage/lineage.ts); a unit test
-- (entities/mentions.test.ts) holds this list to those. svc_mentioned_urns gives the URNs a value names:
-- every string in it that is a URN. The index is kept in this file with the two functions it is built
-- from, so that a change of either builds it again (this file is applied again when its text changes).
CREATE OR REPLACE FUNCTION svc_mentioning_aspect(aspect text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT aspect = ANY ('{chartInfo, dashboardInfo, dataHubExecutionRequestInput, dataJobInfo, dataJobInputOutput, structuredProperties, upstreamLineage}'::text[])
$$;

CREATE OR REPLACE FUNCTION svc_mentioned_urns(metadata json) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT u #>> '{}'), '{}')
    FROM jsonb_path_query(metadata::jsonb, 'strict $.** ? (@.type() == "string" && @ starts with "urn:li:")') AS u
$$;

DROP INDEX IF EXISTS aspects_mentions;
CREATE INDEX aspects_mentions ON aspects USING gin (svc_mentioned_urns(metadata))
  WHERE version = 0 AND svc_mentioning_aspect(aspect);
