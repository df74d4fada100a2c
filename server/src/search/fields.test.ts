import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dateMillis, dateProblem } from './fields.ts';

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
