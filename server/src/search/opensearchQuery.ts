/**
 * A resolved search expression as OpenSearch query DSL, in filter context (nothing is scored). Fields
 * are the ones the index maps and values are typed already (search/expr.ts resolves them), so both
 * backends read an expression alike and OpenSearch parses no query string. Keyword values too long to
 * be indexed under their field are matched by hash (opensearchDocuments.ts), dates as ISO 8601 text.
 */
import type { Resolved, Scalar } from './backend.ts';
import type { PatternPart } from './expr.ts';
import { LONG_VALUES_FIELD, longValueTerm, MAX_INDEXED_KEYWORD } from './opensearchDocuments.ts';

/** A wildcard query's pattern: literal text with `*`, `?` and backslashes escaped, and the wildcards. */
function pattern(p: PatternPart[]): string {
  return p.map((x) => (typeof x === 'string' ? x.replace(/[*?\\]/g, '\\$&') : x.wildcard)).join('');
}

const MATCH_NONE = { bool: { must_not: [{ match_all: {} }] } };

/** The dates a value may hold (`yyyy-MM-dd`, years 0000 to 9999), in milliseconds. */
const FIRST_DATE_MS = -62_167_219_200_000;
const LAST_DATE_MS = 253_402_300_799_999;

/**
 * Dates of a query (svc's milliseconds) as OpenSearch reads them for certain: ISO 8601 date-times of a
 * stated format. A bare number on a date field would be read through the field's formats,
 * `strict_date_optional_time` first (`2024` a year; a negative number matched nothing).
 */
const DATE_FORMAT = 'strict_date_optional_time';
/** A bound beyond the dates a value may hold is the end of them. */
const dateBound = (ms: number): string => new Date(Math.max(FIRST_DATE_MS, Math.min(LAST_DATE_MS, ms))).toISOString();
/** A term beyond the dates a value may hold matches nothing (undefined). */
const dateTerm = (ms: number): string | undefined => (ms < FIRST_DATE_MS || ms > LAST_DATE_MS ? undefined : dateBound(ms));

/** A resolved expression as OpenSearch query DSL (filter context: nothing is scored). */
export function queryDsl(e: Resolved): Record<string, unknown> {
  switch (e.kind) {
    case 'all':
      return { match_all: {} };
    case 'none':
      return MATCH_NONE;
    case 'and':
      return { bool: { filter: e.of.map(queryDsl) } };
    case 'or':
      return { bool: { should: e.of.map(queryDsl), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [queryDsl(e.of)] } };
    case 'exists':
      // A keyword field's values may all be too long to be indexed under it (a description, say).
      if (e.field.type === 'keyword' && e.field.name !== 'urn') {
        return { bool: { should: [{ exists: { field: e.field.name } }, { prefix: { [LONG_VALUES_FIELD]: `${e.field.name}=` } }], minimum_should_match: 1 } };
      }
      return { exists: { field: e.field.name } };
    case 'terms': {
      if (e.field.type === 'keyword') return keywordTerms(e.field.name, e.values.map(String));
      if (e.field.type !== 'date') return e.values.length === 0 ? MATCH_NONE : { terms: { [e.field.name]: e.values } };
      const days = e.values.map((v) => dateTerm(Number(v))).filter((v) => v !== undefined);
      if (days.length === 0) return MATCH_NONE;
      return { bool: { should: days.map((v) => ({ range: { [e.field.name]: { gte: v, lte: v, format: DATE_FORMAT } } })), minimum_should_match: 1 } };
    }
    case 'range': {
      const date = e.field.type === 'date';
      const bound = (v: Scalar) => (date ? dateBound(Number(v)) : v);
      const bounds: Record<string, unknown> = date ? { format: DATE_FORMAT } : {};
      if (e.min) bounds[e.min.inclusive ? 'gte' : 'gt'] = bound(e.min.value);
      if (e.max) bounds[e.max.inclusive ? 'lte' : 'lt'] = bound(e.max.value);
      return { range: { [e.field.name]: bounds } };
    }
    case 'wildcard':
      return { wildcard: { [e.field.name]: { value: pattern(e.pattern) } } };
  }
}

/** Keyword values equal to one of `values`: under the field, or by hash when too long to be indexed there. */
function keywordTerms(field: string, values: string[]): Record<string, unknown> {
  const short = values.filter((v) => v.length <= MAX_INDEXED_KEYWORD);
  const long = values.filter((v) => v.length > MAX_INDEXED_KEYWORD).map((v) => longValueTerm(field, v));
  const clauses = [...(short.length ? [{ terms: { [field]: short } }] : []), ...(long.length ? [{ terms: { [LONG_VALUES_FIELD]: long } }] : [])];
  if (clauses.length === 0) return MATCH_NONE;
  return clauses.length === 1 ? clauses[0]! : { bool: { should: clauses, minimum_should_match: 1 } };
}
