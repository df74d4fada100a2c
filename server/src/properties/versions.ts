/**
 * Structured property versions: what a version may be, and their order.
 *
 * A version is the time of a breaking change, `yyyyMMddHHmmss`: a real date and time (no 13th month,
 * no February 30th, no hour 24), in the years 1000-9999, and at most {@link VERSION_LEAD_MS} (one day)
 * ahead of the server's clock in UTC. A breaking change needs a version greater than the current one
 * and applies as soon as it is accepted; svc schedules nothing. The bound keeps every property
 * changeable: an accepted version is at most a day ahead of the clock, so a greater one is always
 * accepted again at the latest a second later (`99999999999999` would have needed a greater version
 * that no 14-digit string is). A day, not less: a version is usually typed as the local wall-clock time,
 * which runs up to 14 hours ahead of UTC (UTC+14), and the writer's clock may be a little ahead of the
 * server's.
 *
 * Order: versions compare case-insensitively as text (for 14 digits, chronologically); no version
 * ('' or undefined) is older than any. Postgres compares the `definition_version` column (digits or
 * '') the same way with `<`.
 */
import { compareVersions } from '../contract/definitions.ts';
import { compactUtc, dateTimeProblem, utcMillis, type DateTimeParts } from '../shared/dates.ts';

/** How far ahead of the server's clock (UTC) a version may be. */
export const VERSION_LEAD_MS = 24 * 60 * 60 * 1000;

const FORMAT = /^[0-9]{14}$/;

/** DataHub's message for a version that is not 14 digits (its clients match it). */
export const VERSION_FORMAT_MESSAGE = 'Invalid version specified. Must match [0-9]{14}';

/**
 * Why `version` cannot be given at `now` (epoch ms), or undefined when it can.
 *
 *   versionProblem('20241301000000', now) // 'Invalid version specified: 20241301000000 is not a date and time yyyyMMddHHmmss: month 13 does not exist (01-12)'
 */
export function versionProblem(version: string, now: number): string | undefined {
  const parts = partsOf(version);
  if (!parts) return VERSION_FORMAT_MESSAGE;
  const problem = dateTimeProblem(parts);
  if (problem) return `Invalid version specified: ${version} is not a date and time yyyyMMddHHmmss: ${problem}`;
  const latest = compactUtc(now + VERSION_LEAD_MS);
  if (version > latest) {
    return (
      `Invalid version specified: ${version} is more than a day ahead of the server's clock (now ${compactUtc(now)} UTC, so at most ${latest}): ` +
      'a version is the time of its breaking change, which applies when it is accepted and cannot be planned for later'
    );
  }
  return undefined;
}

/**
 * A version to suggest for a breaking change at `now`: the time now, or a second after `current` when
 * that is later (a version can be at most a day ahead, so this one is accepted within a second).
 */
export function suggestedVersion(current: string | undefined, now: number): string {
  const clock = compactUtc(now);
  const parts = current === undefined || clock > current ? undefined : partsOf(current);
  return parts && !dateTimeProblem(parts) ? compactUtc(utcMillis(parts) + 1000) : clock;
}

/** The date and time a 14-digit version writes; undefined for another string. */
function partsOf(version: string): DateTimeParts | undefined {
  if (!FORMAT.test(version)) return undefined;
  const n = (from: number, to: number) => Number(version.slice(from, to));
  return { year: n(0, 4), month: n(4, 6), day: n(6, 8), hour: n(8, 10), minute: n(10, 12), second: n(12, 14) };
}

export { compareVersions };

/** Whether values written under version `at` are older than the definition's `current` version. */
export const isOlder = (at: string | undefined, current: string | undefined): boolean => compareVersions(at, current) < 0;
