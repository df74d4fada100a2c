import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { filtersExpr, type Expr } from './expr.ts';
import { parseQuery } from './queryParser.ts';
import { SvcError } from '../shared/errors.ts';

const t = (field: string, ...values: string[]) => ({ kind: 'terms', field, values });

test('query strings: terms, implicit OR, AND before OR, NOT, + and -', () => {
  assert.deepEqual(parseQuery('*'), { kind: 'all' });
  assert.deepEqual(parseQuery('a:1 b:2'), { kind: 'or', of: [t('a', '1'), t('b', '2')] });
  assert.deepEqual(parseQuery('a:1 AND b:2 OR c:3'), { kind: 'or', of: [{ kind: 'and', of: [t('a', '1'), t('b', '2')] }, t('c', '3')] });
  assert.deepEqual(parseQuery('a:1 AND NOT b:2'), { kind: 'and', of: [t('a', '1'), { kind: 'not', of: t('b', '2') }] });
  assert.deepEqual(parseQuery('a:1 -b:2'), { kind: 'and', of: [{ kind: 'not', of: t('b', '2') }, t('a', '1')] });
  assert.deepEqual(parseQuery('+a:1 b:2'), t('a', '1'), 'with a required clause, optional ones do not filter');
  assert.deepEqual(parseQuery('a:(x OR y)'), { kind: 'or', of: [t('a', 'x'), t('a', 'y')] });
  assert.deepEqual(parseQuery('foo'), t('<default>', 'foo'));
});

test('query strings: ranges, exists, wildcards, quoting and escapes', () => {
  assert.deepEqual(parseQuery('a:>45'), { kind: 'range', field: 'a', min: { value: '45', inclusive: false } });
  assert.deepEqual(parseQuery('a:<=45'), { kind: 'range', field: 'a', max: { value: '45', inclusive: true } });
  assert.deepEqual(parseQuery('a:[1 TO 5}'), { kind: 'range', field: 'a', min: { value: '1', inclusive: true }, max: { value: '5', inclusive: false } });
  assert.deepEqual(parseQuery('a:{* TO 5]'), { kind: 'range', field: 'a', max: { value: '5', inclusive: true } });
  assert.deepEqual(parseQuery('_exists_:s.x'), { kind: 'exists', field: 's.x' });
  assert.deepEqual(parseQuery('a:*'), { kind: 'exists', field: 'a' });
  assert.deepEqual(parseQuery('a:go?d*'), { kind: 'wildcard', field: 'a', pattern: ['go', { wildcard: '?' }, 'd', { wildcard: '*' }] });
  assert.deepEqual(parseQuery('a:x\\*y'), t('a', 'x*y'), 'an escaped * is a literal');
  assert.deepEqual(parseQuery('a:"x y*"'), t('a', 'x y*'), 'quoted values are literal');
});

test('query strings that cannot be served are 400s saying what is supported', () => {
  for (const q of ['a:/x/', 'a:x~', 'a:"x y"~2', 'a:(']) {
    assert.throws(
      () => parseQuery(q),
      (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && /supported: field:value/.test(e.violations[0]!),
      q,
    );
  }
});

test('filters: every condition, negated, OR of ANDs; bad criteria are named', () => {
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', values: ['a', 'b'] }] }]), t('f', 'a', 'b'));
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'EXISTS', negated: true }] }]), { kind: 'not', of: { kind: 'exists', field: 'f' } });
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'CONTAIN', values: ['x'] }] }]), { kind: 'wildcard', field: 'f', pattern: [{ wildcard: '*' }, 'x', { wildcard: '*' }] });
  assert.deepEqual(filtersExpr([{ and: [{ field: 'f', condition: 'GREATER_THAN', values: ['4'] }] }, { and: [{ field: 'g', condition: 'END_WITH', values: ['z'] }] }]), {
    kind: 'or',
    of: [
      { kind: 'range', field: 'f', min: { value: '4', inclusive: false } },
      { kind: 'wildcard', field: 'g', pattern: [{ wildcard: '*' }, 'z'] },
    ],
  });
  assert.throws(
    () => filtersExpr([{ and: [{ field: 'f', condition: 'GREATER_THAN', values: [] }, { field: 'g', condition: 'EQUAL' }] }]),
    (e: unknown) => e instanceof SvcError && e.violations.length === 2 && /orFilters\[0\]\.and\[0\]: GREATER_THAN takes exactly one value/.test(e.violations[0]!),
  );
});

test('an operator with no clause on one side is refused; escaped characters and phrases are text, not operators', () => {
  for (const [q, message] of [
    ['name:x OR', 'OR needs a clause after it'],
    ['name:(x AND)', 'AND needs a clause after it'],
    ['OR name:x', 'OR needs a clause before it'],
  ] as const) {
    assert.throws(() => parseQuery(q), (e: unknown) => e instanceof SvcError && e.message.includes(message), q);
  }
  assert.deepEqual(parseQuery('name:a\\ OR'), { kind: 'terms', field: 'name', values: ['a OR'] });
  assert.deepEqual(parseQuery('name:"a \\" OR"'), { kind: 'terms', field: 'name', values: ['a " OR'] });
  assert.equal(parseQuery('name:\\( OR name:\\)').kind, 'or');
});

// ---- generated classes of query strings, against a reference ----------------------------------

/** A boolean formula over three fields holding 0 or 1, rendered as a query string in any spelling. */
type Formula = { kind: 'term'; field: 'a' | 'b' | 'c'; value: '0' | '1' } | { kind: 'not'; of: Formula } | { kind: 'and' | 'or'; of: [Formula, Formula] };

/** The records searched: every combination of a, b, c in {0, 1}. */
const RECORDS = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ({ a: String(n & 1), b: String((n >> 1) & 1), c: String((n >> 2) & 1) }) as Record<string, string>);

/** The reference: what a formula means. */
function holds(f: Formula, r: Record<string, string>): boolean {
  switch (f.kind) {
    case 'term':
      return r[f.field] === f.value;
    case 'not':
      return !holds(f.of, r);
    case 'and':
      return holds(f.of[0], r) && holds(f.of[1], r);
    case 'or':
      return holds(f.of[0], r) || holds(f.of[1], r);
  }
}

/** What a parsed expression selects among the records. */
function selects(e: Expr, r: Record<string, string>): boolean {
  switch (e.kind) {
    case 'all':
      return true;
    case 'terms':
      return e.values.includes(r[e.field]!);
    case 'not':
      return !selects(e.of, r);
    case 'and':
      return e.of.every((x) => selects(x, r));
    case 'or':
      return e.of.some((x) => selects(x, r));
    default:
      throw new Error(`unexpected ${e.kind}`);
  }
}

const formula: fc.Arbitrary<Formula> = fc.letrec<{ f: Formula }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('term' as const), field: fc.constantFrom('a' as const, 'b' as const, 'c' as const), value: fc.constantFrom('0' as const, '1' as const) }),
    fc.record({ kind: fc.constant('not' as const), of: tie('f') }),
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), of: fc.tuple(tie('f'), tie('f')) }),
  ),
})).f;

/** Renders a formula with random spellings: NOT, ! or - for negation (stacked, or around a group), AND/&&, OR/||. */
function render(f: Formula, pick: () => number): string {
  switch (f.kind) {
    case 'term':
      return pick() % 4 === 0 ? `(${f.field}:${f.value})` : `${f.field}:${f.value}`;
    case 'not': {
      const inner = render(f.of, pick);
      const grouped = f.of.kind === 'and' || f.of.kind === 'or' ? inner : pick() % 3 === 0 ? `(${inner})` : inner;
      return [`NOT ${grouped}`, `!${grouped}`, `-${grouped}`, `NOT(${inner})`][pick() % 4]!;
    }
    default: {
      const op = f.kind === 'and' ? ['AND', '&&'][pick() % 2] : ['OR', '||'][pick() % 2];
      return `(${render(f.of[0], pick)} ${op} ${render(f.of[1], pick)})`;
    }
  }
}

test('negations nested to any depth, in every spelling, mean what the formula means (NOT NOT x is x)', () => {
  fc.assert(
    fc.property(formula, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), (f, choices) => {
      let i = 0;
      const q = render(f, () => choices[i++ % choices.length]!);
      const e = parseQuery(q);
      for (const r of RECORDS) assert.equal(selects(e, r), holds(f, r), `${q} on ${JSON.stringify(r)}`);
    }),
    { numRuns: 3000 },
  );
});

test('a stack of 1..N negations in mixed spellings is x for an even count, NOT x for an odd one', () => {
  const negation = fc.constantFrom('NOT ', '!', '-', 'NOT(', '!(', '-(');
  fc.assert(
    fc.property(fc.array(negation, { minLength: 1, maxLength: 40 }), fc.constantFrom('a:1', 'b:0'), (stack, x) => {
      const q = stack.join('') + x + ')'.repeat(stack.filter((n) => n.endsWith('(')).length);
      const expected = stack.length % 2 === 0 ? parseQuery(x) : { kind: 'not', of: parseQuery(x) };
      assert.deepEqual(parseQuery(q), expected, q);
    }),
  );
});

test('chains without parentheses: AND binds tighter than OR, a NOT negates its clause, x NOT y is x AND NOT y', () => {
  const clause = fc.tuple(fc.constantFrom('', 'NOT ', '!', 'NOT NOT ', '!!'), fc.constantFrom('a', 'b', 'c'), fc.constantFrom('0', '1'));
  fc.assert(
    fc.property(clause, fc.array(fc.tuple(fc.constantFrom('AND', '&&', 'OR', '||', 'NOT', 'AND NOT', 'OR NOT'), clause), { maxLength: 6 }), (first, rest) => {
      const text = (c: typeof first) => `${c[0]}${c[1]}:${c[2]}`;
      const q = [text(first), ...rest.map(([op, c]) => `${op} ${text(c)}`)].join(' ');
      const value = (c: typeof first, r: Record<string, string>) => (r[c[1]] === c[2]) !== ((c[0].match(/NOT|!/g)?.length ?? 0) % 2 === 1);
      // The reference: OR of AND-runs.
      const reference = (r: Record<string, string>) => {
        const ors: boolean[][] = [[value(first, r)]];
        for (const [op, c] of rest) {
          const v = op.endsWith('NOT') ? !value(c, r) : value(c, r);
          if (op.startsWith('OR') || op === '||') ors.push([v]);
          else ors[ors.length - 1]!.push(v);
        }
        return ors.some((run) => run.every(Boolean));
      };
      const e = parseQuery(q);
      for (const r of RECORDS) assert.equal(selects(e, r), reference(r), `${q} on ${JSON.stringify(r)}`);
    }),
    { numRuns: 2000 },
  );
});

test('operator sequences with a missing clause are refused, naming the operator and its column: OR OR, AND AND, leading, trailing', () => {
  const binary = fc.constantFrom('AND', 'OR', '&&', '||');
  const op = fc.constantFrom('AND', 'OR', '&&', '||', 'NOT');
  const clause = fc.constantFrom('a:1', 'b:0', '(a:1 OR c:1)', 'NOT c:1', '"x y"');
  const bad = fc.oneof(
    // Two operators in a row (a NOT after AND/OR negates, so only a binary operator second).
    fc.tuple(clause, op, binary, clause).map(([l, o1, o2, r]) => ({ q: `${l} ${o1} ${o2} ${r}`, op: o1, message: `${o1} needs a clause after it` })),
    // Leading.
    fc.tuple(binary, clause).map(([o, r]) => ({ q: `${o} ${r}`, op: o, message: `${o} needs a clause before it` })),
    fc.tuple(binary, clause).map(([o, r]) => ({ q: `a:1 AND (${o} ${r})`, op: o, message: `${o} needs a clause before it` })),
    // Trailing, at the end or of a group.
    fc.tuple(clause, op).map(([l, o]) => ({ q: `${l} ${o}`, op: o, message: `${o} needs a clause after it` })),
    fc.tuple(clause, op).map(([l, o]) => ({ q: `(${l} ${o}) OR b:1`, op: o, message: `${o} needs a clause after it` })),
    // A modifier with nothing (or a space) after it.
    fc.tuple(clause, fc.constantFrom('-', '+', '!')).map(([l, m]) => ({ q: `${l} ${m} b:1`, op: m, message: `${m} needs a clause right after it` })),
  );
  fc.assert(
    fc.property(bad, ({ q, message }) => {
      assert.throws(
        () => parseQuery(q),
        (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && e.message.includes(message) && /at column \d+/.test(e.message),
        q,
      );
    }),
    { numRuns: 1000 },
  );
});

test('empty field names and misplaced colons are refused with where they are', () => {
  for (const q of [':a', 'a:b:c', 'a: :b', '(:x)', 'NOT :x']) {
    assert.throws(() => parseQuery(q), (e: unknown) => e instanceof SvcError && /cannot parse .*: unexpected ":" at column \d+/.test(e.message), q);
  }
});

test('groups nest at most 100 deep; deeper is a 400, not a stack overflow', () => {
  assert.deepEqual(parseQuery(`${'('.repeat(100)}a:1${')'.repeat(100)}`), t('a', '1'));
  assert.throws(() => parseQuery(`${'('.repeat(101)}a:1${')'.repeat(101)}`), (e: unknown) => e instanceof SvcError && /groups nest more than 100 deep/.test(e.message));
  assert.throws(() => parseQuery('('.repeat(100_000)), (e: unknown) => e instanceof SvcError);
  assert.deepEqual(parseQuery(`${'!'.repeat(9_990)}a:1`), t('a', '1'), 'a stack of negations is read without recursion');
});

test('operator words are values only quoted; a / inside a value is escaped', () => {
  assert.throws(() => parseQuery('name:NOT'), (e: unknown) => e instanceof SvcError && e.message.includes('NOT is an operator, found where a value was expected (at column 6); to search for the word, quote it: "NOT"'));
  assert.deepEqual(parseQuery('name:"NOT"'), t('name', 'NOT'));
  assert.deepEqual(parseQuery('name:ANDROID'), t('name', 'ANDROID'));
  assert.throws(() => parseQuery('name:a/b'), (e: unknown) => e instanceof SvcError && e.message.includes('a / in a value is escaped'));
  assert.deepEqual(parseQuery('name:a\\/b'), t('name', 'a/b'));
});

test('a query string longer than 10,000 characters is refused before it is read, saying the limit', () => {
  assert.throws(
    () => parseQuery(Array(5_000).fill('a').join(' OR ')),
    (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION' && /^query: at most 10,000 characters, got 24,996/.test(e.message),
  );
  assert.doesNotThrow(() => parseQuery(`name:${'x'.repeat(9_990)}`));
});
