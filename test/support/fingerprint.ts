/**
 * A fingerprint of everything a test server stores, for asserting that a rejected request changed
 * nothing: every aspect row with its metadata, the number of time series rows, every recorded
 * structured property assignment, and the numbers of tasks and API tokens.
 */
import { sql } from './testServer.ts';

/** Everything stored in the database at `databaseUrl`, as one string that changes when anything does. */
export async function fingerprint(databaseUrl: string): Promise<string> {
  const [row] = await sql<{ f: string }>(
    databaseUrl,
    `SELECT (SELECT count(*) || ':' || coalesce(md5(string_agg(urn || aspect || version || metadata::text, ',' ORDER BY urn, aspect, version)), '') FROM aspects)
         || '|' || (SELECT count(*) FROM timeseries_entries)
         || '|' || (SELECT count(*) || ':' || coalesce(md5(string_agg(entity_urn || property_urn || definition_version, ',' ORDER BY entity_urn, property_urn)), '') FROM structured_property_assignments)
         || '|' || (SELECT count(*) FROM tasks) || '|' || (SELECT count(*) FROM api_tokens) AS f`,
  );
  return row!.f;
}
