import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkDefinition } from './definitionRules.ts';
import type { PropertyDefinition } from './types.ts';
import { suggestedVersion, VERSION_FORMAT_MESSAGE, VERSION_LEAD_MS, versionProblem } from './versions.ts';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const DAY = 24 * 60 * 60 * 1000;
/** Server clocks from 1990 to 2200. */
const clock = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2200, 0, 1) });

/**
 * The reference: whether the digits name an instant, by the platform's own calendar (a date that does
 * not exist rolls over into another, which then reads back differently).
 */
function realDateTime(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return y >= 1000 && [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()].join() === [y, mo, d, h, mi, s].join();
}

/** Fourteen digits whose parts are each near or past their ranges: months 00-13, days 00-32, hours 00-25, … */
const digits = fc
  .tuple(
    fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(1000, 1900, 2000, 2023, 2024, 2100, 2400, 9999)),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: 0, max: 61 }),
    fc.integer({ min: 0, max: 61 }),
  )
  .map(([y, mo, d, h, mi, s]) => ({ parts: [y, mo, d, h, mi, s] as const, version: `${pad(y, 4)}${pad(mo)}${pad(d)}${pad(h)}${pad(mi)}${pad(s)}` }));

test('a version is accepted exactly when it is a real date and time no more than a day ahead of the clock', () => {
  fc.assert(
    fc.property(digits, clock, ({ parts, version }, now) => {
      const real = realDateTime(...parts);
      const ahead = real && Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]) > now + VERSION_LEAD_MS;
      const problem = versionProblem(version, now);
      assert.equal(problem === undefined, real && !ahead, `${version} at ${new Date(now).toISOString()}: ${problem}`);
      if (!real) assert.match(problem!, new RegExp(`^Invalid version specified: ${version} is not a date and time yyyyMMddHHmmss: (year|month|day|hour|minute|second) `));
      if (ahead) assert.match(problem!, /is more than a day ahead of the server's clock/);
    }),
    { numRuns: 5000 },
  );
});

test('the calendar edges: leap days, month ends, the last second of a day', () => {
  const now = Date.UTC(2026, 0, 1);
  for (const v of ['20240229000000', '20000229235959', '20230131235959', '20230430000000', '19991231235959', '10000101000000']) assert.equal(versionProblem(v, now), undefined, v);
  for (const [v, why] of [
    ['20241301000000', 'month 13 does not exist (01-12)'],
    ['20240001000000', 'month 00 does not exist (01-12)'],
    ['20230229000000', 'day 29 does not exist: February 2023 has 28 days'],
    ['21000229000000', 'day 29 does not exist: February 2100 has 28 days'],
    ['20240431000000', 'day 31 does not exist: April 2024 has 30 days'],
    ['20240100000000', 'day 00 does not exist: January 2024 has 31 days'],
    ['20240101240000', 'hour 24 does not exist (00-23)'],
    ['20240101006000', 'minute 60 does not exist (00-59)'],
    ['20240101000060', 'second 60 does not exist (00-59)'],
    ['09991231235959', 'year 999 is outside 1000-9999'],
  ]) {
    assert.equal(versionProblem(v!, now), `Invalid version specified: ${v} is not a date and time yyyyMMddHHmmss: ${why}`);
  }
});

test('anything but 14 digits gets DataHub’s message', () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 20 }).filter((s) => !/^[0-9]{14}$/.test(s)),
      (s) => versionProblem(s, Date.now()) === VERSION_FORMAT_MESSAGE,
    ),
  );
  for (const v of ['2024061408000', '202406140800000', '2024-06-14', '２０２４０６１４０８００００', ' 20240614080000']) assert.equal(versionProblem(v, Date.now()), VERSION_FORMAT_MESSAGE, v);
});

test('99999999999999 and other far-future versions are refused: nothing accepted locks a property', () => {
  const now = Date.UTC(2025, 5, 15, 10, 30);
  assert.match(versionProblem('99991231235959', now)!, /^Invalid version specified: 99991231235959 is more than a day ahead of the server's clock \(now 20250615103000 UTC, so at most 20250616103000\)/);
  assert.match(versionProblem('99999999999999', now)!, /is not a date and time/);
  assert.equal(versionProblem('20250616103000', now), undefined, 'a day ahead is accepted (UTC+14 wall clocks, clock skew)');
  assert.notEqual(versionProblem('20250616103001', now), undefined);
});

test('after any accepted version, a greater one is accepted a second later: the suggested one', () => {
  fc.assert(
    fc.property(digits, clock, fc.integer({ min: 1000, max: 400 * DAY }), ({ version }, now, later) => {
      fc.pre(versionProblem(version, now) === undefined);
      const next = suggestedVersion(version, now + later);
      assert.ok(next > version, `${next} > ${version}`);
      assert.equal(versionProblem(next, now + later), undefined, next);
    }),
    { numRuns: 3000 },
  );
});

test('a refused breaking change names the current version and one that lifts it, and that one does', () => {
  const NUMBER = 'urn:li:dataType:svc.number';
  const DATASET = 'urn:li:entityType:svc.dataset';
  const ctx = (previous: PropertyDefinition, now: number) => ({
    urn: 'urn:li:structuredProperty:a.b',
    previous,
    softDeleted: false,
    dataTypes: new Set([NUMBER, 'urn:li:dataType:svc.string']),
    entityTypes: new Set([DATASET]),
    now,
  });
  fc.assert(
    fc.property(digits, clock, fc.boolean(), ({ version }, now, versioned) => {
      fc.pre(versionProblem(version, now) === undefined);
      const previous: PropertyDefinition = { qualifiedName: 'a.b', valueType: NUMBER, entityTypes: [DATASET], cardinality: 'MULTIPLE', ...(versioned ? { version } : {}) };
      const breaking = { ...previous, cardinality: 'SINGLE' as const };
      const later = now + 1000;
      const refused = checkDefinition(breaking, ctx(previous, later));
      const remedy = refused.at(-1)!;
      assert.equal(refused[0], 'Property definition cardinality cannot be changed from MULTI to SINGLE');
      assert.match(remedy, versioned ? new RegExp(`^A breaking change needs a version greater than the current one, ${version} \\(${version} is not\\): `) : /^A breaking change needs a version: /);
      const suggested = remedy.match(/e\.g\. ([0-9]{14})$/)![1]!;
      assert.deepEqual(checkDefinition({ ...breaking, version: suggested }, ctx(previous, later)), []);
    }),
    { numRuns: 2000 },
  );
});

test('a version the property already has is not checked again (it may predate the rule)', () => {
  const previous: PropertyDefinition = { qualifiedName: 'a.b', valueType: 'urn:li:dataType:svc.number', entityTypes: ['urn:li:entityType:svc.dataset'], version: '99999999999999' };
  const ctx = { urn: 'urn:li:structuredProperty:a.b', previous, softDeleted: false, dataTypes: new Set([previous.valueType]), entityTypes: new Set(previous.entityTypes) };
  assert.deepEqual(checkDefinition({ ...previous, description: 'still editable' }, ctx), []);
  assert.deepEqual(checkDefinition({ ...previous, version: '20241301000000' }, ctx), [
    'Invalid version specified: 20241301000000 is not a date and time yyyyMMddHHmmss: month 13 does not exist (01-12)',
  ]);
});
