import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { DATAHUB_MODEL } from '../contract/datahubModel.ts';
import { ASPECT_FIELDS, aspectFieldValues, BROWSE_PATH_V2_SEPARATOR, dateMillis, dateProblem, MAX_ASPECT_FIELD_VALUES, SEARCH_FIELD_ASPECTS } from './fields.ts';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The reference: whether the parts exist, by the platform's calendar (a day that does not exist rolls over). */
function exists(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return y >= 1000 && [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()].join() === [y, mo, d, h, mi, s].join();
}

test('a date or date-time in a search is read exactly when it exists in the calendar, as the instant it names', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1000, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.option(fc.tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }), fc.constantFrom('', 'Z', '+02:00', '-05:30')), { nil: undefined }),
      (y, mo, d, time) => {
        const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}${time ? `T${pad(time[0])}:${pad(time[1])}:${pad(time[2])}${time[3]}` : ''}`;
        const real = exists(y, mo, d, time?.[0] ?? 0, time?.[1] ?? 0, time?.[2] ?? 0);
        const ms = dateMillis(text);
        assert.equal(ms !== undefined, real, `${text}: ${dateProblem(text)}`);
        if (real) assert.equal(ms, Date.parse(time ? `${text}${time[3] === '' ? 'Z' : ''}` : `${text}T00:00:00Z`), text);
        else assert.match(dateProblem(text)!, /^(month|day|hour|minute|second) \d+ does not exist/);
      },
    ),
    { numRuns: 5000 },
  );
});

test('the issue’s date and its kin are no dates; epoch milliseconds and shorter ISO forms still are', () => {
  assert.equal(dateProblem('2024-02-30'), 'day 30 does not exist: February 2024 has 29 days');
  assert.equal(dateProblem('2023-02-29'), 'day 29 does not exist: February 2023 has 28 days');
  assert.equal(dateProblem('2024-01-01T24:00'), 'hour 24 does not exist (00-23)');
  assert.equal(dateProblem('2024-01-01T00:00+19:00'), 'the offset +19:00 is beyond ±18:00');
  assert.equal(dateMillis('2024-02-29'), Date.UTC(2024, 1, 29));
  assert.equal(dateMillis('2024'), 2024, 'digits are epoch milliseconds');
  assert.equal(dateMillis('2024-06'), Date.UTC(2024, 5, 1));
  assert.equal(dateMillis('2024-06-14 08:00'), Date.UTC(2024, 5, 14, 8));
  assert.equal(dateMillis('2024-06-14T08:00:00.1239Z'), Date.UTC(2024, 5, 14, 8, 0, 0, 123));
});

test('every field of ASPECT_FIELDS reads strings or symbols (a map of strings for entries; integers for a date) at a path that exists in each of its aspects of DataHub’s model', () => {
  const resolve = (s: Record<string, unknown>): Record<string, unknown> => {
    const ref = s.$ref as string | undefined;
    return ref ? resolve(DATAHUB_MODEL.definitions[ref.slice('#/definitions/'.length)] as Record<string, unknown>) : s;
  };
  const used = new Set(DATAHUB_MODEL.entities.flatMap((e) => e.aspects));
  for (const f of ASPECT_FIELDS) {
    for (const aspect of f.aspects) {
      const spec = DATAHUB_MODEL.aspects[aspect];
      assert.ok(spec && !spec.timeseries && used.has(aspect), `${f.name}: ${aspect} is no versioned aspect of an entity type`);
      let at = resolve(DATAHUB_MODEL.definitions[spec.class] as Record<string, unknown>);
      for (const key of f.path.split('/')) {
        const next = key === '*' ? at.items : (at.properties as Record<string, unknown> | undefined)?.[key];
        assert.ok(next, `${f.name}: ${aspect} has no ${f.path}`);
        at = resolve(next as Record<string, unknown>);
      }
      const leaf = f.form === 'entries' ? resolve(at.additionalProperties as Record<string, unknown>) : at;
      if (f.type === 'date') assert.equal(leaf.type, 'integer', `${f.name}: ${aspect}'s ${f.path} holds ${JSON.stringify(leaf)}, not times`);
      else assert.ok(leaf.type === 'string' || Array.isArray(leaf.enum), `${f.name}: ${aspect}'s ${f.path} holds ${JSON.stringify(leaf)}, not strings`);
    }
  }
});

test('the outbox’s triggers queue an entity for every aspect its document is built from, and no other', () => {
  const sql = readFileSync(new URL('../db/migrations/R__svc_search_aspect.sql', import.meta.url), 'utf8');
  const listed = /'\{([^}]*)\}'::text\[\]/.exec(sql)![1]!.split(',').map((a) => a.trim()).sort();
  assert.deepEqual(listed, [...new Set(['status', 'structuredProperties', 'propertyDefinition', ...SEARCH_FIELD_ASPECTS])].sort());
});

test('aspect fields take each string at their path: arrays walked, maps as key=value, a browse path joined, times as ISO date-times, empties and non-strings left out', () => {
  const field = (name: string) => ASPECT_FIELDS.find((f) => f.name === name)!;
  assert.deepEqual(aspectFieldValues(field('owners'), { owners: [{ owner: 'urn:li:corpuser:a', type: 'DATAOWNER' }, { owner: 'urn:li:corpGroup:b' }, {}] }), ['urn:li:corpuser:a', 'urn:li:corpGroup:b']);
  assert.deepEqual(aspectFieldValues(field('customProperties'), { customProperties: { env: 'PROD', team: '' } }), ['env=PROD', 'team=']);
  assert.deepEqual(aspectFieldValues(field('browsePathV2'), { path: [{ id: 'urn:li:container:a', urn: 'urn:li:container:a' }, { id: 'x' }] }), [`${BROWSE_PATH_V2_SEPARATOR}urn:li:container:a${BROWSE_PATH_V2_SEPARATOR}x`]);
  assert.deepEqual(aspectFieldValues(field('browsePathV2'), { path: [] }), []);
  assert.deepEqual(aspectFieldValues(field('description'), { description: '' }), []);
  assert.deepEqual(aspectFieldValues(field('typeNames'), { typeNames: ['Table', 7, null] }), ['Table']);
  assert.deepEqual(aspectFieldValues(field('container'), null), []);
  assert.deepEqual(aspectFieldValues(field('created'), { name: 'run', created: { time: 1718352000000, actor: 'urn:li:corpuser:a' } }), ['2024-06-14T08:00:00.000Z']);
  assert.deepEqual(aspectFieldValues(field('created'), { created: { time: 2000 } }), ['1970-01-01T00:00:02.000Z']);
  assert.deepEqual(aspectFieldValues(field('created'), { created: { time: 1e17 } }), []);
  assert.deepEqual(aspectFieldValues(field('lastModifiedAt'), { lastModified: { time: '1718352000000' } }), []);
  assert.equal(aspectFieldValues(field('tags'), { tags: Array.from({ length: MAX_ASPECT_FIELD_VALUES + 5 }, (_, i) => ({ tag: `urn:li:tag:${i}` })) }).length, MAX_ASPECT_FIELD_VALUES);
});
