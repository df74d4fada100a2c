/**
 * The order of structured property versions: `yyyyMMddhhmmss` strings, compared case-insensitively as
 * text (for 14 digits, chronologically); no version ('' or undefined) is older than any. Postgres
 * compares the `definition_version` column (digits or '') the same way with `<`.
 */

/** Negative when `a` is older than `b`, zero when the same, positive when newer. */
export function compareVersions(a: string | undefined, b: string | undefined): number {
  const x = (a ?? '').toLowerCase();
  const y = (b ?? '').toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether values written under version `at` are older than the definition's `current` version. */
export const isOlder = (at: string | undefined, current: string | undefined): boolean => compareVersions(at, current) < 0;
