/**
 * Soft delete: an entity whose `status` aspect has `removed: true` is soft deleted. It is left out of
 * listings and existence checks unless asked for, and a soft-deleted structured property hides its
 * values and refuses changes. Reversible: `removed: false`, or deleting `status`.
 */

/** Whether a `status` aspect value marks its entity soft deleted. */
export function isRemoved(status: unknown): boolean {
  return (status as { removed?: unknown } | undefined)?.removed === true;
}

/**
 * The same test in SQL, for the `status` row aliased `alias`: true when its entity is soft deleted.
 * (`metadata` is json; `@>` needs jsonb.)
 */
export const removedSql = (alias: string) => `${alias}.metadata::jsonb @> '{"removed": true}'`;
