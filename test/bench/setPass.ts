/**
 * What `bench:structured-properties` and `bench:http-floor` share: their options, and the set pass's
 * requests (a `retention` value per dataset, cycling over the datasets) with the raw upsert of the
 * same row, so that the floor is measured on exactly the writes svc is.
 */
import { parseArgs } from 'node:util';
import type { WrkRequest } from './benchSupport.ts';

/**
 * `--entities 10000 --seconds 12 --rounds 6 --concurrency 16`: the datasets, and each pass's time, rounds
 * and connections; `extra`: a benchmark's own string options, with their defaults (returned in `extra`).
 */
export function passOptions<K extends string = never>(
  extra: Record<K, string> = {} as Record<K, string>,
): { entities: number; rounds: number; roundSeconds: number; concurrency: number; extra: Record<K, string> } {
  const own = Object.fromEntries(Object.entries<string>(extra).map(([k, d]) => [k, { type: 'string' as const, default: d }]));
  const { values } = parseArgs({
    options: {
      entities: { type: 'string', default: '10000' },
      seconds: { type: 'string', default: '12' },
      rounds: { type: 'string', default: '6' },
      concurrency: { type: 'string', default: '16' },
      ...own,
    },
  });
  const rounds = Number(values.rounds);
  return {
    entities: Number(values.entities),
    rounds,
    // wrk takes whole seconds.
    roundSeconds: Math.max(1, Math.round(Number(values.seconds) / rounds)),
    concurrency: Number(values.concurrency),
    extra: Object.fromEntries(Object.keys(extra).map((k) => [k, String((values as Record<string, unknown>)[k])])) as Record<K, string>,
  };
}

export const RETENTION = 'urn:li:structuredProperty:bench.retention';
export const DAYS = [30, 60, 90, 365];
export const benchUrn = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:bench,db.t${i},PROD)`;
/** Lua: the URN of dataset `i`, encoded as one path segment. */
export const BENCH_URN_LUA = `"urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Abench%2Cdb.t" .. i .. "%2CPROD%29"`;

/** Request `i` of the set pass: POST of dataset i's structuredProperties, `query` after the path. */
export function setRequest(query = ''): WrkRequest {
  return {
    method: 'POST',
    pathLua: `"/openapi/v3/entity/dataset/" .. ${BENCH_URN_LUA} .. "/structuredProperties${query}"`,
    bodyLua: `'{"value":{"properties":[{"propertyUrn":"${RETENTION}","values":[{"double":' .. ({${DAYS.join(', ')}})[i % 4 + 1] .. '}]}]}}'`,
  };
}

/** The raw side's row for request `i` of the set pass. */
export function setRow(i: number): { urn: string; aspect: string; value: unknown } {
  return { urn: benchUrn(i), aspect: 'structuredProperties', value: { properties: [{ propertyUrn: RETENTION, values: [{ double: DAYS[i % 4] }] }] } };
}
