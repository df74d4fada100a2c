/**
 * The calendar svc reads dates and times in: the proleptic Gregorian calendar, in UTC, years 1000 to
 * 9999 (four digits, DataHub's range for date values). One place decides whether a date or a time of
 * day exists, for every input that holds one: a `date` value (`2024-02-29`), a date in a search
 * (`2024-02-30` is no date, where `Date.parse` would read March 1st), and a structured property's
 * `version` (`yyyyMMddHHmmss`).
 */

/** Days in `month` (1–12) of `year`: February has 29 in years divisible by 4, except centuries not divisible by 400. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The parts of a date and time of day, as written (hours, minutes and seconds default to 0). */
export interface DateTimeParts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * Why these parts name no instant of the calendar, or undefined when they do: the first part out of
 * its range, said so (`month 13 does not exist (01-12)`, `February 2023 has 28 days`, `hour 24 does
 * not exist (00-23)`). A leap second (`:60`) is no second here, as in Java's and OpenSearch's dates.
 */
export function dateTimeProblem(p: DateTimeParts): string | undefined {
  if (!(p.year >= 1000 && p.year <= 9999)) return `year ${p.year} is outside 1000-9999`;
  if (!(p.month >= 1 && p.month <= 12)) return `month ${pad(p.month)} does not exist (01-12)`;
  const days = daysInMonth(p.year, p.month);
  if (!(p.day >= 1 && p.day <= days)) return `day ${pad(p.day)} does not exist: ${MONTHS[p.month - 1]} ${p.year} has ${days} days`;
  if (p.hour !== undefined && !(p.hour >= 0 && p.hour <= 23)) return `hour ${pad(p.hour)} does not exist (00-23)`;
  if (p.minute !== undefined && !(p.minute >= 0 && p.minute <= 59)) return `minute ${pad(p.minute)} does not exist (00-59)`;
  if (p.second !== undefined && !(p.second >= 0 && p.second <= 59)) return `second ${pad(p.second)} does not exist (00-59)`;
  return undefined;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Epoch milliseconds of parts that {@link dateTimeProblem} accepts, in UTC. */
export function utcMillis(p: DateTimeParts): number {
  return Date.UTC(p.year, p.month - 1, p.day, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
}

/** An instant written as `yyyyMMddHHmmss` in UTC: `compactUtc(Date.UTC(2024, 5, 14, 8))` → `20240614080000`. */
export function compactUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace(/[-T:]/g, '');
}
