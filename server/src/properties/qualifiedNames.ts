/**
 * What a structured property's qualified name may be: a dotted name (the seed's words), names of
 * letters, digits, `_` and `-` joined by single dots (`io.acryl.privacy.retentionTime`). Each such
 * name can be searched as it is written: its search field (`structuredProperties.<name, . as _>`) is
 * a term of a query string without escapes, a key of an OpenSearch mapping and a filter's field. A
 * `/` would start a regular expression in a query string, `(` a group, `\` an escape, `:` the value,
 * and an empty name between dots (`a..b`, `.a`, `a.`) makes field names that no query can tell apart
 * (`a..b` and `a._b` are both `a__b`).
 *
 * Checked when a property is created (definitionRules.ts); properties created before the rule keep
 * their names and stay searchable by them.
 */
import { VERSIONED_FIELDS } from './types.ts';

const PART = /^[\p{L}\p{M}\p{N}_-]+$/u;

/** A versioned property's search field under `structuredProperties.`: `_versioned.<name>.<version>.<type>`. */
export const VERSIONED_FIELD = /^_versioned\.[^.]+\.[0-9]{14}\.[a-z_]+$/;

/** Whether `s` is a dotted name: one or more names of letters, digits, `_` and `-`, joined by single dots. */
export function isDottedName(s: string): boolean {
  return s.split('.').every((part) => PART.test(part));
}

/**
 * Why `name` cannot be a new property's qualified name, or undefined when it can. Spaces are left to
 * DataHub's own message (`Qualified names cannot have spaces`).
 *
 *   qualifiedNameProblem('a/b') // 'Qualified name a/b is not a dotted name: "/" is not allowed; …'
 */
export function qualifiedNameProblem(name: string): string | undefined {
  const expected = 'a qualified name is names of letters, digits, _ and - joined by single dots, e.g. io.acryl.privacy.retentionTime';
  const bad = [...new Set([...name].filter((ch) => ch !== '.' && ch !== ' ' && !PART.test(ch)))];
  if (bad.length) return `Qualified name ${name} is not a dotted name: ${bad.map((ch) => JSON.stringify(ch)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not allowed; ${expected}`;
  if (name.split('.').some((part) => part === '')) return `Qualified name ${name} is not a dotted name: it has an empty name ${name === '' ? '' : 'between dots, or a dot at its start or end '}; ${expected}`.replace(' ;', ';');
  // Its dotted form would read as the search field of a versioned property.
  if (VERSIONED_FIELD.test(name)) return `Qualified name ${name} is the form of a versioned property's search field (${VERSIONED_FIELDS}.<name>.<version>.<type>)`;
  return undefined;
}
