/**
 * What a search selects, as one expression tree that both backends translate: parsed from a query
 * string (Lucene / OpenSearch `query_string` syntax, parsed by the `lucene` package) or built from
 * filters (DataHub's `orFilters`: an OR of ANDs of `{field, condition, values, negated}`).
 *
 * Field names are kept as given here; the search service resolves them (see searchService.ts).
 */
import lucene from 'lucene';
import { SvcError } from '../errors.ts';

/** One part of a wildcard pattern: literal text, `*` (any run) or `?` (one character). */
export type PatternPart = string | { wildcard: '*' | '?' };

export interface Bound {
  value: string;
  inclusive: boolean;
}

export type Leaf =
  | { kind: 'terms'; field: string; values: string[] }
  | { kind: 'exists'; field: string }
  | { kind: 'range'; field: string; min?: Bound; max?: Bound }
  | { kind: 'wildcard'; field: string; pattern: PatternPart[] };

export type Expr = Leaf | { kind: 'and'; of: Expr[] } | { kind: 'or'; of: Expr[] } | { kind: 'not'; of: Expr } | { kind: 'all' };

/** The field a term without one is matched against (see searchService.ts for what it covers). */
export const DEFAULT_FIELD = '<default>';

export const ALL: Expr = { kind: 'all' };
export const and = (of: Expr[]): Expr => (of.length === 1 ? of[0]! : of.length === 0 ? ALL : { kind: 'and', of });
export const or = (of: Expr[]): Expr => (of.length === 1 ? of[0]! : { kind: 'or', of });
export const not = (of: Expr): Expr => (of.kind === 'not' ? of.of : { kind: 'not', of });

// ---- query strings -------------------------------------------------------------------------------

const SUPPORTED =
  'supported: field:value, "quoted values", field:>n, >=, <, <=, field:[a TO b] and {a TO b}, _exists_:field, AND, OR, NOT, +, -, parentheses, wildcards (* and ?)';

function syntaxError(what: string): SvcError {
  return SvcError.validation([`query: ${what}; ${SUPPORTED}`]);
}

interface TermNode {
  field: string;
  term: string;
  quoted: boolean;
  regex: boolean;
  proximity?: number | null;
  similarity?: number | null;
  prefix?: string | null;
}

interface RangeNode {
  field: string;
  term_min: string;
  term_max: string;
  inclusive: 'both' | 'left' | 'right' | 'none';
}

interface BinaryNode {
  left?: LuceneNode;
  right?: LuceneNode;
  operator?: string;
  start?: string;
  parenthesized?: boolean;
  field?: string;
}

type LuceneNode = TermNode | RangeNode | BinaryNode;

/** Parses a query string; `*` or an empty string selects everything. */
export function parseQuery(query: string): Expr {
  const q = query.trim();
  if (q === '' || q === '*' || q === '*:*') return ALL;
  // The parser drops an operator with nothing after it (`a OR`) or reads a leading one as a term (`OR b`),
  // where Lucene's own parser refuses both.
  // Escaped characters are text (`\(`, `\ `, `\"`), and so is a phrase: both are blanked out first.
  const bare = q.replace(/\\./g, 'x').replace(/"[^"]*"/g, '""');
  const dangling = bare.match(/(?:^|[\s(])(AND|OR|NOT|&&|\|\|)\s*(?:$|\))/);
  if (dangling) throw syntaxError(`${dangling[1]} needs a clause after it`);
  const leading = bare.match(/(?:^|\()\s*(AND|OR|&&|\|\|)\s/);
  if (leading) throw syntaxError(`${leading[1]} needs a clause before it`);
  let ast: BinaryNode;
  try {
    ast = lucene.parse(q) as BinaryNode;
  } catch (err) {
    // The parser's message lists every token it expected; where it stopped and what it found is enough.
    const e = err as { location?: { start: { column: number } }; found?: string | null };
    const at = e.location ? ` at column ${e.location.start.column}` : '';
    const found = e.found == null ? 'end of query' : JSON.stringify(e.found);
    throw syntaxError(`cannot parse ${JSON.stringify(query.length > 200 ? `${query.slice(0, 200)}…` : query)}: unexpected ${found}${at}`);
  }
  return node(ast, undefined);
}

/** A clause of a chain, with its `+`/`-` modifier. */
interface Clause {
  expr: Expr;
  modifier: '+' | '-' | undefined;
}

function node(n: LuceneNode, groupField: string | undefined): Expr {
  const c = clause(n, groupField);
  return c.modifier === '-' ? not(c.expr) : c.expr;
}

/** A node as a clause: a field's `+`/`-`/`!` prefix (or a term's) becomes its modifier. */
function clause(n: LuceneNode, groupField: string | undefined): Clause {
  if ('term_min' in n) {
    const { field, modifier } = splitField(n.field, groupField);
    const star = (v: string) => v === '*';
    const range: Leaf = {
      kind: 'range',
      field,
      ...(star(n.term_min) ? {} : { min: { value: unescape(n.term_min), inclusive: n.inclusive === 'both' || n.inclusive === 'left' } }),
      ...(star(n.term_max) ? {} : { max: { value: unescape(n.term_max), inclusive: n.inclusive === 'both' || n.inclusive === 'right' } }),
    };
    return { expr: range.min || range.max ? range : { kind: 'exists', field }, modifier };
  }
  if ('term' in n) {
    const { field, modifier } = splitField(n.field, groupField);
    if (n.regex) throw syntaxError('regular expressions (/…/) are not supported');
    if (n.similarity != null) throw syntaxError('fuzzy terms (~) are not supported');
    if (n.proximity != null) throw syntaxError('proximity searches ("…"~n) are not supported');
    const termModifier = n.prefix === '-' || n.prefix === '!' ? '-' : n.prefix === '+' ? '+' : undefined;
    return { expr: term(field, n.term, n.quoted), modifier: termModifier ?? modifier };
  }
  // A group: `(…)`, `field:(…)`, or a chain of clauses joined by operators.
  const field = n.field !== undefined ? splitField(n.field, groupField) : { field: groupField, modifier: undefined };
  const chain = flatten(n, field.field);
  return { expr: combine(chain), modifier: field.modifier };
}

/** The clauses and operators of a right-leaning chain `a OP b OP c`, with a leading NOT applied. */
function flatten(n: BinaryNode, groupField: string | undefined): { clauses: Clause[]; ops: string[] } {
  const clauses: Clause[] = [];
  const ops: string[] = [];
  let cur: BinaryNode | undefined = n;
  let first = true;
  while (cur) {
    if (!cur.left) throw syntaxError('an empty group');
    const c = clause(cur.left, groupField);
    clauses.push(first && cur.start === 'NOT' ? { expr: c.modifier === '-' ? c.expr : not(c.expr), modifier: undefined } : c);
    first = false;
    if (!cur.operator || !cur.right) break;
    ops.push(cur.operator);
    const r: LuceneNode = cur.right;
    if (!('term' in r) && !('term_min' in r) && !r.parenthesized && r.field === undefined && r.start === undefined) {
      cur = r;
    } else {
      clauses.push(clause(r, groupField));
      cur = undefined;
    }
  }
  return { clauses, ops };
}

/**
 * Combines a chain as Lucene's query parser does for the plain cases: clauses joined without an
 * operator are optional unless `+` (must) or `-` (must not); `AND` binds tighter than `OR`;
 * `x NOT y` is `x AND NOT y`.
 */
function combine({ clauses, ops }: { clauses: Clause[]; ops: string[] }): Expr {
  // Runs split by implicit operators; within a run, explicit AND/OR with AND first.
  const runs: Clause[][] = [[clauses[0]!]];
  const runOps: string[][] = [[]];
  ops.forEach((op, i) => {
    const c = clauses[i + 1]!;
    if (op === '<implicit>') {
      runs.push([c]);
      runOps.push([]);
    } else {
      runs[runs.length - 1]!.push(c);
      runOps[runOps.length - 1]!.push(op);
    }
  });
  const parts: Clause[] = runs.map((run, k) => (run.length === 1 ? run[0]! : { expr: explicit(run, runOps[k]!), modifier: undefined }));
  if (parts.length === 1) return parts[0]!.modifier === '-' ? not(parts[0]!.expr) : parts[0]!.expr;
  const must = parts.filter((p) => p.modifier === '+').map((p) => p.expr);
  const mustNot = parts.filter((p) => p.modifier === '-').map((p) => not(p.expr));
  const should = parts.filter((p) => p.modifier === undefined).map((p) => p.expr);
  return and([...must, ...mustNot, ...(must.length === 0 && should.length ? [or(should)] : [])]);
}

function explicit(run: Clause[], ops: string[]): Expr {
  const value = (c: Clause) => (c.modifier === '-' ? not(c.expr) : c.expr);
  const ors: Expr[][] = [[value(run[0]!)]];
  ops.forEach((op, i) => {
    const upper = op.toUpperCase();
    const negate = upper.endsWith('NOT');
    const e = negate ? not(value(run[i + 1]!)) : value(run[i + 1]!);
    if (upper === 'OR' || upper === '||' || upper === 'OR NOT') ors.push([e]);
    else if (upper === 'AND' || upper === '&&' || upper === 'AND NOT' || upper === 'NOT') ors[ors.length - 1]!.push(e);
    else throw syntaxError(`the operator ${op} is not supported`);
  });
  return or(ors.map((a) => and(a)));
}

function splitField(raw: string, groupField: string | undefined): { field: string; modifier: '+' | '-' | undefined } {
  let f = raw;
  let modifier: '+' | '-' | undefined;
  if (f.startsWith('-') || f.startsWith('!')) {
    modifier = '-';
    f = f.slice(1);
  } else if (f.startsWith('+')) {
    modifier = '+';
    f = f.slice(1);
  }
  if (f === '<implicit>') f = groupField ?? DEFAULT_FIELD;
  return { field: unescape(f), modifier };
}

/** A term: `_exists_:f`, a range shorthand (`>45`), a wildcard pattern, or an exact value. */
function term(field: string, raw: string, quoted: boolean): Expr {
  if (field === '_exists_') return { kind: 'exists', field: unescape(raw) };
  if (quoted) return { kind: 'terms', field, values: [raw.replace(/\\(.)/g, '$1')] };
  if (/(^|[^\\])(\\\\)*\\$/.test(raw)) throw syntaxError(`${JSON.stringify(raw)} ends with a \\ that escapes nothing`);
  if (/^(>=|<=|>|<)$/.test(raw)) throw syntaxError(`${raw} needs a value after it`);
  const range = raw.match(/^(>=|<=|>|<)(.+)$/);
  if (range) {
    const bound = { value: unescape(range[2]!), inclusive: range[1]!.endsWith('=') };
    return { kind: 'range', field, ...(range[1]!.startsWith('>') ? { min: bound } : { max: bound }) };
  }
  const pattern = wildcardParts(raw);
  if (pattern.some((p) => typeof p !== 'string')) {
    return pattern.length === 1 && (pattern[0] as { wildcard: string }).wildcard === '*' ? { kind: 'exists', field } : { kind: 'wildcard', field, pattern };
  }
  return { kind: 'terms', field, values: [unescape(raw)] };
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Splits an unquoted term at its unescaped `*` and `?`. */
function wildcardParts(raw: string): PatternPart[] {
  const parts: PatternPart[] = [];
  let lit = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\\' && i + 1 < raw.length) lit += raw[++i];
    else if (ch === '*' || ch === '?') {
      if (lit) parts.push(lit);
      lit = '';
      parts.push({ wildcard: ch });
    } else lit += ch;
  }
  if (lit) parts.push(lit);
  return parts;
}

// ---- filters -------------------------------------------------------------------------------------

export const CONDITIONS = [
  'EQUAL',
  'IN',
  'EXISTS',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL_TO',
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL_TO',
  'CONTAIN',
  'START_WITH',
  'END_WITH',
] as const;
export type Condition = (typeof CONDITIONS)[number];

/** One filter criterion (DataHub's FacetFilterInput); `condition` defaults to EQUAL. */
export interface Criterion {
  field: string;
  condition?: Condition;
  values?: string[];
  negated?: boolean;
}

/** `orFilters`: entities matching every criterion of at least one group. */
export type OrFilters = { and: Criterion[] }[];

/** The expression of filters; VALIDATION naming each criterion that cannot be served. */
export function filtersExpr(filters: OrFilters): Expr {
  const problems: string[] = [];
  const groups = filters.map((g, i) =>
    and(
      g.and.map((c, j) => {
        try {
          const e = criterion(c);
          return c.negated ? not(e) : e;
        } catch (err) {
          problems.push(`orFilters[${i}].and[${j}]: ${(err as Error).message}`);
          return ALL;
        }
      }),
    ),
  );
  if (problems.length) throw SvcError.validation(problems);
  return groups.length === 0 ? ALL : or(groups);
}

function criterion(c: Criterion): Expr {
  const condition = c.condition ?? 'EQUAL';
  const values = c.values ?? [];
  const one = (): string => {
    if (values.length !== 1) throw new Error(`${condition} takes exactly one value, got ${values.length}`);
    return values[0]!;
  };
  const field = c.field;
  switch (condition) {
    case 'EXISTS':
      return { kind: 'exists', field };
    case 'EQUAL':
    case 'IN':
      if (values.length === 0) throw new Error(`${condition} takes at least one value`);
      return { kind: 'terms', field, values };
    case 'GREATER_THAN':
      return { kind: 'range', field, min: { value: one(), inclusive: false } };
    case 'GREATER_THAN_OR_EQUAL_TO':
      return { kind: 'range', field, min: { value: one(), inclusive: true } };
    case 'LESS_THAN':
      return { kind: 'range', field, max: { value: one(), inclusive: false } };
    case 'LESS_THAN_OR_EQUAL_TO':
      return { kind: 'range', field, max: { value: one(), inclusive: true } };
    case 'CONTAIN':
      return { kind: 'wildcard', field, pattern: [{ wildcard: '*' }, one(), { wildcard: '*' }] };
    case 'START_WITH':
      return { kind: 'wildcard', field, pattern: [one(), { wildcard: '*' }] };
    case 'END_WITH':
      return { kind: 'wildcard', field, pattern: [{ wildcard: '*' }, one()] };
    default:
      throw new Error(`unknown condition ${String(condition)}; conditions are ${CONDITIONS.join(', ')}`);
  }
}

/** Every leaf of an expression. */
export function leaves(e: Expr): Leaf[] {
  if (e.kind === 'and' || e.kind === 'or') return e.of.flatMap(leaves);
  if (e.kind === 'not') return leaves(e.of);
  if (e.kind === 'all') return [];
  return [e];
}
