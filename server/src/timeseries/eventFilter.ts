/**
 * The `filter` of a `getTimeseriesAspectValues` call, as DataHub's clients send it: a disjunction of
 * conjunctions of criteria on the fields of the entries' values (`{"or": [{"and": [{"field":
 * "pipelineName", "values": ["p1"], "condition": "EQUAL"}]}]}`; the older form `{"criteria": […]}` is
 * one conjunction). A criterion holds when the field's value (a dotted path reaches into records, an
 * array holds when one of its elements does) equals one of the values as text, or, negated, when it
 * does not. Stateful ingestion finds its last checkpoint so (its pipeline's name).
 *
 *   const matches = eventFilter({ or: [{ and: [{ field: 'pipelineName', values: ['p1'] }] }] });
 *   matches({ pipelineName: 'p1', timestampMillis: 1 }); // true
 */
import { SvcError } from '../shared/errors.ts';

/** Conditions a criterion may have: equality is what the clients send. */
const CONDITIONS = ['EQUAL'];
/** Criteria one filter may hold, in all its conjunctions. */
export const MAX_FILTER_CRITERIA = 100;

interface Criterion {
  path: string[];
  values: string[];
  negated: boolean;
}

/** The text a field's value compares as: numbers and booleans as JSON writes them. */
function texts(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap(texts);
  if (typeof v === 'string') return [v];
  if (typeof v === 'number' || typeof v === 'boolean') return [String(v)];
  return [];
}

function valueAt(event: unknown, path: string[]): unknown[] {
  let at: unknown[] = [event];
  for (const key of path) {
    at = at.flatMap((x) => (Array.isArray(x) ? x : [x])).flatMap((x) => (x !== null && typeof x === 'object' && Object.hasOwn(x, key) ? [(x as Record<string, unknown>)[key]] : []));
  }
  return at;
}

function criterion(raw: unknown, where: string, problems: string[]): Criterion | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${where} must be an object {"field", "values", "condition", "negated"}`);
    return undefined;
  }
  const c = raw as Record<string, unknown>;
  const before = problems.length;
  if (typeof c.field !== 'string' || c.field === '') problems.push(`${where}.field must be the name of a field of the aspect`);
  const values = c.values ?? (c.value === undefined ? undefined : [c.value]);
  if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) problems.push(`${where}.values must be a non-empty list of strings`);
  if (c.condition !== undefined && c.condition !== null && !CONDITIONS.includes(c.condition as string)) {
    problems.push(`${where}.condition ${JSON.stringify(c.condition).slice(0, 40)} is not supported on time series values; svc takes ${CONDITIONS.join(', ')}`);
  }
  if (c.negated !== undefined && c.negated !== null && typeof c.negated !== 'boolean') problems.push(`${where}.negated must be true or false`);
  if (problems.length > before) return undefined;
  return { path: (c.field as string).split('.'), values: values as string[], negated: c.negated === true };
}

/**
 * The predicate of a filter over entries' values; undefined for no filter (absent, null, or without
 * criteria). VALIDATION naming every malformed part.
 */
export function eventFilter(raw: unknown): ((event: unknown) => boolean) | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw SvcError.validation(['filter must be {"or": [{"and": [criteria]}]} or {"criteria": [criteria]}']);
  const f = raw as { or?: unknown; criteria?: unknown };
  const problems: string[] = [];
  const conjunctions: unknown[] = f.or !== undefined && f.or !== null ? (Array.isArray(f.or) ? f.or : (problems.push('filter.or must be a list'), [])) : f.criteria !== undefined && f.criteria !== null ? [{ and: f.criteria }] : [];
  let count = 0;
  const ands = conjunctions.map((c, i) => {
    const list = (c as { and?: unknown } | null)?.and;
    if (!Array.isArray(list)) {
      problems.push(`filter.or[${i}] must be {"and": [criteria]}`);
      return [];
    }
    count += list.length;
    return list.map((x, j) => criterion(x, `filter.or[${i}].and[${j}]`, problems)).filter((x): x is Criterion => x !== undefined);
  });
  if (count > MAX_FILTER_CRITERIA) problems.push(`filter: at most ${MAX_FILTER_CRITERIA} criteria, got ${count}`);
  if (problems.length) throw SvcError.validation(problems);
  if (ands.length === 0) return undefined;
  return (event) => ands.some((all) => all.every((c) => valueAt(event, c.path).flatMap(texts).some((t) => c.values.includes(t)) !== c.negated));
}
