/**
 * jsonbText (db/jsonbText.ts) against Postgres itself: for every value it gives a text for, the text is
 * the one Postgres prints for the value stored as jsonb; for the numbers it does not print like
 * Postgres, it gives none.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { jsonbText } from '../../server/src/db/jsonbText.ts';

let client: pg.Client;
before(async () => {
  client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
});
after(async () => {
  await client.end();
});

const asPostgresPrints = async (v: unknown) => (await client.query<{ t: string }>('SELECT $1::jsonb::text AS t', [JSON.stringify(v)])).rows[0]!.t;

test('system metadata and nested values print as Postgres prints them', async () => {
  const values: unknown[] = [
    { lastObserved: 1764049000123, runId: 'no-run-id-provided' },
    { runId: 'ingest-1', lastObserved: 0, properties: { a: '1', bb: 'x y', é: 'accent', z: 'zz', ab: 'q' }, registryName: null },
    // Keys of equal length in byte order, where UTF-16 order differs (an astral character against U+FFFD).
    { '\u{1F600}': 1, '\uFFFD\uFFFD': 2, ab: 3, a: 4, '': 5 },
    { s: 'quote " backslash \\ tab \t newline \n cr \r ff \f bs \b ctl \u0001 \u001f del \u007f é ☃ \u{1F600} \u2028' },
    { n: [0, -0, 1, -1, 1.5, 0.1, 123456.789, 2 ** 53, 1e20, 0.000001, -2.5e-3] },
    { deep: [{ b: [true, false, null, []], a: {} }, [[]], 'x'] },
    { skipped: undefined, kept: 1, list: [undefined, 2] },
    [],
    {},
    'plain',
    42,
    null,
  ];
  for (const v of values) assert.equal(jsonbText(v), await asPostgresPrints(v), JSON.stringify(v));
});

test('numbers JavaScript prints with an exponent, and what JSON leaves out, get no text', () => {
  for (const v of [1e21, 1e-7, { a: 1.5e-9 }, [Number.NaN], Infinity, { d: new Date(0) }, undefined, () => 1]) assert.equal(jsonbText(v), undefined);
});

test('many random objects print as Postgres prints them', async () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const alphabet = ['a', 'b', 'Z', '_', '0', 'é', '☃', '\u{1F600}', '"', '\\', '\n', ' '];
  const str = () => Array.from({ length: Math.floor(rand() * 6) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 2 || r < 0.3) return [str(), Math.floor(rand() * 1e6) / 100, true, null, Math.floor(rand() * 2 ** 40)][Math.floor(rand() * 5)];
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 5) }, () => [str(), value(depth + 1)]));
  };
  for (let i = 0; i < 300; i++) {
    const v = { lastObserved: Math.floor(rand() * 2 ** 41), extra: value(0) };
    assert.equal(jsonbText(v), await asPostgresPrints(v), JSON.stringify(v));
  }
});
