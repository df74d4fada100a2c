/**
 * Query strings (Lucene / OpenSearch `query_string` syntax, the subset below) parsed into a search's
 * expression tree (expr.ts).
 */
import { SvcError } from '../shared/errors.ts';
import { type PatternPart, type Leaf, type Expr, DEFAULT_FIELD, ALL, and, or, not } from './expr.ts';

// svc reads Lucene's query syntax itself: a generic Lucene parser (the `lucene` package, used before)
// drops what it cannot place (`a OR OR b` was `a OR b`, `NOT NOT x` read the second NOT as a word), so
// that a query meant one thing and ran as another. This one knows where every token is, refuses what
// has no meaning with the column it is at, and gives stacked negations their meaning.
//
//   query    := clause ( [AND | OR | && | || | NOT] clause )*      (no operator: OR, as OpenSearch's default)
//   clause   := modifier* ( '(' query ')' | field ':' modifier* value | value ) [^boost]
//   modifier := '+' | '-' | '!' | NOT                              ('+' required, the others negate)
//   value    := '(' query ')' | range | "quoted" | term            (a term may hold wildcards * and ?)

const SUPPORTED =
  'supported: field:value, "quoted values", field:>n, >=, <, <=, field:[a TO b] and {a TO b}, _exists_:field, AND, OR, NOT, +, -, parentheses, wildcards (* and ?)';

function syntaxError(what: string): SvcError {
  return SvcError.validation([`query: ${what}; ${SUPPORTED}`]);
}

/** Groups nest at most this deep (a deeper one is refused, not a stack overflow). */
const MAX_DEPTH = 100;
const WHITESPACE = /[ \t\r\n\f\u3000]/;
/** Characters that end a term unless escaped (`\:`); `+`, `-` and `!` only at its start. */
const SPECIAL = new Set([...'(){}[]"^~/:']);
const BINARY = new Map([
  ['AND', 'AND'],
  ['&&', 'AND'],
  ['OR', 'OR'],
  ['||', 'OR'],
]);

/** A clause of a chain, with its `+`/`-` role (a negated clause in a chain of implicit ORs is required absent). */
interface Clause {
  expr: Expr;
  modifier: '+' | '-' | undefined;
}

/**
 * The longest query string taken: a search holds 100 terms at most (searchService.ts), which fit in far
 * less; a longer text (GraphQL's `query` comes in a body of up to 5 MB) is refused before it is read.
 */
export const MAX_QUERY_CHARS = 10_000;

/** Parses a query string; `*` or an empty string selects everything. */
export function parseQuery(query: string): Expr {
  if (query.length > MAX_QUERY_CHARS) throw SvcError.validation([`query: at most ${MAX_QUERY_CHARS.toLocaleString('en-US')} characters, got ${query.length.toLocaleString('en-US')} (a search holds 100 terms and conditions at most)`]);
  const q = query.trim();
  if (q === '' || q === '*' || q === '*:*') return ALL;
  return new QueryParser(query).parse();
}

class QueryParser {
  private at = 0;
  private depth = 0;

  constructor(private readonly q: string) {}

  parse(): Expr {
    const expr = this.chain(undefined);
    this.space();
    if (this.at < this.q.length) this.unexpected(this.q[this.at] === ')' ? 'a ) that closes no (' : undefined);
    return expr;
  }

  // -- the pieces of a chain

  /** Clauses joined by operators, up to the end of the query or of its group. */
  private chain(groupField: string | undefined): Expr {
    const clauses: Clause[] = [];
    const ops: string[] = [];
    this.space();
    const first = this.word();
    if (first !== undefined && BINARY.has(first)) throw syntaxError(`${first} needs a clause before it (at column ${this.at + 1})`);
    clauses.push(this.clause(groupField));
    for (;;) {
      this.space();
      if (this.at >= this.q.length || this.q[this.at] === ')') break;
      const op = this.word();
      if (op !== undefined && (BINARY.has(op) || op === 'NOT')) {
        const start = this.at;
        this.at += op.length;
        this.space();
        const next = this.word();
        // `a NOT b` is `a AND NOT b`; after AND or OR, a NOT negates the clause that follows.
        if (this.at >= this.q.length || this.q[this.at] === ')' || (next !== undefined && BINARY.has(next))) {
          throw syntaxError(`${op} needs a clause after it (at column ${start + 1}${next !== undefined ? `, found ${next}` : ''})`);
        }
        ops.push(BINARY.get(op) ?? 'NOT');
      } else ops.push('<implicit>');
      clauses.push(this.clause(groupField));
    }
    return combine({ clauses, ops });
  }

  /** A clause: its modifiers, then a group, a field and its value, or a value of the group's field. */
  private clause(groupField: string | undefined): Clause {
    const modifiers = this.modifiers(true);
    const boosted = (c: Clause) => (this.boost(), c);
    if (this.q[this.at] === '(') return boosted(withModifiers(modifiers, this.group(groupField)));
    const field = this.fieldName();
    if (field === undefined) return boosted(withModifiers(modifiers, this.value(groupField ?? DEFAULT_FIELD)));
    this.space();
    const inner = this.modifiers(false);
    const value = this.q[this.at] === '(' ? this.group(field) : this.value(field);
    return boosted(withModifiers([...modifiers, ...inner], value));
  }

  /**
   * Modifiers before a clause (`wordNot`: `NOT` too; after a field's `:`, only `+`, `-` and `!`), each
   * directly followed by what it applies to.
   */
  private modifiers(wordNot: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      const ch = this.q[this.at];
      if (ch === '+' || ch === '-' || ch === '!') {
        out.push(ch);
        this.at++;
        if (this.at >= this.q.length || WHITESPACE.test(this.q[this.at]!)) throw syntaxError(`${ch} needs a clause right after it (at column ${this.at})`);
        continue;
      }
      if (wordNot && this.word() === 'NOT') {
        const start = this.at;
        this.at += 3;
        this.space();
        const next = this.word();
        if (this.at >= this.q.length || this.q[this.at] === ')' || (next !== undefined && BINARY.has(next))) {
          throw syntaxError(`NOT needs a clause after it (at column ${start + 1}${next !== undefined ? `, found ${next}` : ''})`);
        }
        out.push('NOT');
        continue;
      }
      return out;
    }
  }

  /** `(` chain `)`, its terms of `field` when given (`field:(a OR b)`). */
  private group(field: string | undefined): Expr {
    const open = this.at;
    if (++this.depth > MAX_DEPTH) throw syntaxError(`groups nest more than ${MAX_DEPTH} deep (at column ${open + 1})`);
    this.at++;
    this.space();
    if (this.q[this.at] === ')') throw syntaxError(`an empty group (at column ${open + 1})`);
    if (this.at >= this.q.length) this.unexpected(`the ( at column ${open + 1} is not closed`);
    const expr = this.chain(field);
    if (this.q[this.at] !== ')') this.unexpected(`the ( at column ${open + 1} is not closed`);
    this.at++;
    this.depth--;
    return expr;
  }

  /** A field name: a term directly followed by `:`; undefined (nothing read) when what follows is no field. */
  private fieldName(): string | undefined {
    const start = this.at;
    const raw = this.termText();
    if (raw === '' || this.q[this.at] !== ':') {
      this.at = start;
      return undefined;
    }
    this.at++;
    return unescape(raw);
  }

  /** A range, a quoted value, or a term of `field`. */
  private value(field: string): Expr {
    const ch = this.q[this.at];
    if (ch === '[' || ch === '{') return this.range(field);
    if (ch === '"') return this.quoted(field);
    if (ch === '/') throw syntaxError(`regular expressions (/…/) are not supported (at column ${this.at + 1}; to search for a /, escape it: \\/)`);
    const start = this.at;
    const word = this.word();
    if (word !== undefined && (BINARY.has(word) || word === 'NOT')) {
      throw syntaxError(`${word} is an operator, found where a value was expected (at column ${start + 1}); to search for the word, quote it: "${word}"`);
    }
    const raw = this.termText();
    if (raw === '') this.unexpected();
    if (this.q[this.at] === '~') throw syntaxError(`fuzzy terms (~) are not supported (at column ${this.at + 1})`);
    if (this.q[this.at] === '/') throw syntaxError(`a / in a value is escaped (\\/) or the value quoted (at column ${this.at + 1})`);
    return term(field, raw, false);
  }

  /** `"…"`, whose characters are all text; `"…"~n` (proximity) is refused. */
  private quoted(field: string): Expr {
    const open = this.at++;
    let text = '';
    while (this.at < this.q.length && this.q[this.at] !== '"') {
      if (this.q[this.at] === '\\' && this.at + 1 < this.q.length) this.at++;
      text += this.q[this.at++];
    }
    if (this.at >= this.q.length) this.unexpected(`the quote at column ${open + 1} is not closed`);
    this.at++;
    if (this.q[this.at] === '~') throw syntaxError(`proximity searches ("…"~n) are not supported (at column ${this.at + 1})`);
    return term(field, text, true);
  }

  /** `[a TO b]`, `{a TO b}` or mixed (`[` and `]` inclusive); `*` for an open end. */
  private range(field: string): Expr {
    const open = this.q[this.at++]!;
    const bound = (): string => {
      this.space();
      if (this.q[this.at] === '"') {
        const e = this.quoted(field) as { values: string[] };
        return e.values[0]!.replace(/[\\*]/g, '\\$&');
      }
      const start = this.at;
      while (this.at < this.q.length && !WHITESPACE.test(this.q[this.at]!) && this.q[this.at] !== ']' && this.q[this.at] !== '}') {
        this.at += this.q[this.at] === '\\' ? 2 : 1;
      }
      if (this.at === start) this.unexpected('a range is [from TO to]');
      return this.q.slice(start, Math.min(this.at, this.q.length));
    };
    const min = bound();
    this.space();
    if (!this.q.startsWith('TO', this.at) || !WHITESPACE.test(this.q[this.at + 2] ?? '')) this.unexpected('a range is [from TO to]');
    this.at += 2;
    const max = bound();
    this.space();
    const close = this.q[this.at];
    if (close !== ']' && close !== '}') this.unexpected('a range ends with ] or }');
    this.at++;
    const star = (v: string) => v === '*';
    const range: Leaf = {
      kind: 'range',
      field,
      ...(star(min) ? {} : { min: { value: unescape(min), inclusive: open === '[' } }),
      ...(star(max) ? {} : { max: { value: unescape(max), inclusive: close === ']' } }),
    };
    return range.min || range.max ? range : { kind: 'exists', field };
  }

  // -- characters

  /** A term's text as written (escapes kept), possibly empty; ends at whitespace or a special character. */
  private termText(): string {
    const start = this.at;
    while (this.at < this.q.length) {
      const ch = this.q[this.at]!;
      if (ch === '\\') {
        if (this.at + 1 >= this.q.length) throw syntaxError(`${JSON.stringify(this.q.slice(start))} ends with a \\ that escapes nothing`);
        this.at += 2;
        continue;
      }
      if (WHITESPACE.test(ch) || SPECIAL.has(ch)) break;
      if (this.at === start && (ch === '+' || ch === '-' || ch === '!')) break;
      this.at++;
    }
    return this.q.slice(start, this.at);
  }

  /** The word at the cursor up to whitespace or a parenthesis (not consumed), to tell operators. */
  private word(): string | undefined {
    const m = /^[^ \t\r\n\f\u3000()]+/.exec(this.q.slice(this.at, this.at + 4));
    const w = m?.[0];
    if (w === undefined) return undefined;
    const after = this.q[this.at + w.length];
    return after === undefined || WHITESPACE.test(after) || after === '(' || after === ')' ? w : undefined;
  }

  /** A boost (`^2`, `^0.5`): taken and ignored, a filter has no score. */
  private boost(): void {
    const m = /^\^[0-9]+(\.[0-9]+)?/.exec(this.q.slice(this.at));
    if (m) this.at += m[0].length;
  }

  private space(): void {
    while (this.at < this.q.length && WHITESPACE.test(this.q[this.at]!)) this.at++;
  }

  private unexpected(why?: string): never {
    const found = this.at >= this.q.length ? 'end of query' : JSON.stringify(this.q[this.at]);
    const shown = JSON.stringify(this.q.length > 200 ? `${this.q.slice(0, 200)}…` : this.q);
    throw syntaxError(`cannot parse ${shown}: unexpected ${found} at column ${this.at + 1}${why ? ` (${why})` : ''}`);
  }
}

/**
 * A clause with its modifiers: the first gives its role in a chain (`+` required, the others
 * prohibited), each further negation negates what it applies to, so that `NOT NOT x`, `!!x` and
 * `--x` are `NOT (NOT x)`: x.
 */
function withModifiers(modifiers: string[], expr: Expr): Clause {
  if (modifiers.length === 0) return { expr, modifier: undefined };
  const negations = modifiers.slice(1).filter((m) => m !== '+').length;
  return { expr: negations % 2 ? not(expr) : expr, modifier: modifiers[0] === '+' ? '+' : '-' };
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

/** A run of clauses joined by AND, OR and NOT (AND NOT), AND first. */
function explicit(run: Clause[], ops: string[]): Expr {
  const value = (c: Clause) => (c.modifier === '-' ? not(c.expr) : c.expr);
  const ors: Expr[][] = [[value(run[0]!)]];
  ops.forEach((op, i) => {
    const e = op === 'NOT' ? not(value(run[i + 1]!)) : value(run[i + 1]!);
    if (op === 'OR') ors.push([e]);
    else ors[ors.length - 1]!.push(e);
  });
  return or(ors.map((a) => and(a)));
}

/** A term: `_exists_:f`, a range shorthand (`>45`), a wildcard pattern, or an exact value. */
function term(field: string, raw: string, quoted: boolean): Expr {
  if (field === '_exists_') return { kind: 'exists', field: quoted ? raw : unescape(raw) };
  if (quoted) return { kind: 'terms', field, values: [raw] };
  if (/^(>=|<=|>|<)$/.test(raw)) throw syntaxError(`${raw} needs a value after it`);
  const range = raw.match(/^(>=|<=|>|<)(.+)$/s);
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
  return s.replace(/\\(.)/gs, '$1');
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
