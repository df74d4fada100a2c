/**
 * `olderThan`: how far back a truncation's cut-off is, the one grammar of `svc timeseries truncate
 * --older-than` and of a TruncationJob's `spec.olderThan` (whose CRD validates it with
 * {@link OLDER_THAN_PATTERN}, the same expression).
 *
 * An age is a positive whole number and a unit, with or without one space between: `s`, `m`, `h`, `d`,
 * `w` or `y`, or the unit written out, singular or plural (`sec`, `second`, `min`, `minute`, `hr`,
 * `hour`, `day`, `week`, `yr`, `year`), in small letters:
 *
 *   30d · 720h · 90 days · 2w · 1 week · 1y · 45 minutes
 *
 * A week is 7 days and a year 365.25 days (as the `ms` package counts them, which the CLI used). Not
 * taken, because each could be read two ways or none: a bare number (milliseconds to some tools,
 * seconds to others), `M` (a month or a minute?), months (of which length?), fractions (`1.5h`: write
 * `90m`), a leading zero, ISO 8601 (`P30D`), and blanks around the age.
 */

/** The units and their length in milliseconds, each with the names it may be written as. */
const UNITS: readonly { names: readonly string[]; millis: number }[] = [
  { names: ['s', 'sec', 'secs', 'second', 'seconds'], millis: 1000 },
  { names: ['m', 'min', 'mins', 'minute', 'minutes'], millis: 60_000 },
  { names: ['h', 'hr', 'hrs', 'hour', 'hours'], millis: 3_600_000 },
  { names: ['d', 'day', 'days'], millis: 86_400_000 },
  { names: ['w', 'week', 'weeks'], millis: 7 * 86_400_000 },
  { names: ['y', 'yr', 'yrs', 'year', 'years'], millis: 365.25 * 86_400_000 },
];

const MILLIS_OF = new Map(UNITS.flatMap((u) => u.names.map((name) => [name, u.millis] as const)));

/**
 * The grammar as a regular expression in the syntax both JavaScript and RE2 (Kubernetes' CEL
 * `matches()`) read: the CRD's validation rule is `self.matches('<this>')`.
 */
export const OLDER_THAN_PATTERN = `^([1-9][0-9]*) ?(${UNITS.flatMap((u) => u.names).join('|')})$`;

const GRAMMAR = new RegExp(OLDER_THAN_PATTERN);

/** The grammar in words, for a message that refuses an age: `… must be <this>; got …`. */
export const OLDER_THAN_FORMS = 'a positive whole number and a unit, s, m, h, d, w or y, or the unit written out, such as 30d, 720h or 90 days';

/**
 * The age `text` names, in milliseconds; undefined when it is not one ({@link OLDER_THAN_FORMS}), or
 * is too long to go back from any time (its milliseconds not a safe integer).
 *
 *   ageMillis('90 days') // 7776000000
 *   ageMillis('1.5h')    // undefined
 */
export function ageMillis(text: string): number | undefined {
  const m = GRAMMAR.exec(text);
  if (!m) return undefined;
  const millis = Math.round(Number(m[1]) * MILLIS_OF.get(m[2]!)!);
  return Number.isSafeInteger(millis) ? millis : undefined;
}

/**
 * The cut-off of a truncation `olderThan` before `now` (epoch milliseconds): entries at or before it
 * go. Undefined when `olderThan` is not an age, or goes back further than a time can be written.
 */
export function cutoffMillis(olderThan: string, now: number): number | undefined {
  const age = ageMillis(olderThan);
  return age !== undefined && Number.isSafeInteger(now - age) ? now - age : undefined;
}
