/**
 * The input rules of search, as classes of input, end to end on both backends (issue 48): generated
 * negations nested in every spelling give what a reference evaluator gives over a fixed set of
 * datasets; operator sequences with a missing clause, impossible dates and field names no property can
 * have are 400s that say what was expected (a GraphQL error on GraphQL); and every qualified name a
 * definition accepts is found by its field in a query string, dotted or underscored, by a GraphQL
 * filter and in a facet.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { expectValidationError } from '../support/expectRejected.ts';
import { gqlData, gqlError } from '../support/graphql.ts';
import { searchBackends } from '../support/searchBackends.ts';
import { createDataset, datasetUrn, definitionOf, propertyUrn, setValues, writeDefinition, type Assignment } from '../support/structuredProperties.ts';
import { startTestServer, text, type TestServer } from '../support/testServer.ts';

const FIELDS = ['a', 'b', 'c'] as const;
type Field = (typeof FIELDS)[number];
/** Dataset i holds a, b, c = the bits of i, as "0" or "1", and a date. */
const bit = (i: number, f: Field) => String((i >> FIELDS.indexOf(f)) & 1);
const URNS = Array.from({ length: 8 }, (_, i) => datasetUrn(`rules${i}`));
const DAY = (i: number) => `2024-02-${String(22 + i).padStart(2, '0')}`;

type Formula = { kind: 'term'; field: Field; value: '0' | '1' } | { kind: 'not'; of: Formula } | { kind: 'and' | 'or'; of: [Formula, Formula] };

function holds(f: Formula, i: number): boolean {
  switch (f.kind) {
    case 'term':
      return bit(i, f.field) === f.value;
    case 'not':
      return !holds(f.of, i);
    case 'and':
      return holds(f.of[0], i) && holds(f.of[1], i);
    case 'or':
      return holds(f.of[0], i) || holds(f.of[1], i);
  }
}

const formula: fc.Arbitrary<Formula> = fc.letrec<{ f: Formula }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('term' as const), field: fc.constantFrom(...FIELDS), value: fc.constantFrom('0' as const, '1' as const) }),
    fc.record({ kind: fc.constant('not' as const), of: tie('f') }),
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), of: fc.tuple(tie('f'), tie('f')) }),
  ),
})).f;

/** The formula as a query string: fields dotted or underscored, negations as NOT, ! or -, stacked or around a group. */
function render(f: Formula, pick: () => number): string {
  switch (f.kind) {
    case 'term':
      return `structuredProperties.${pick() % 2 ? `test.rules.${f.field}` : `test_rules_${f.field}`}:${f.value}`;
    case 'not': {
      const inner = render(f.of, pick);
      return [`NOT ${inner}`, `!${inner}`, `-${inner}`, `NOT (${inner})`, `!(${inner})`][pick() % 5]!;
    }
    default:
      return `(${render(f.of[0], pick)} ${f.kind === 'and' ? ['AND', '&&'][pick() % 2] : ['OR', '||'][pick() % 2]} ${render(f.of[1], pick)})`;
  }
}

const SCROLL = 'query($q: String!, $f: [AndFilterInput!]) { scrollAcrossEntities(input: {types: [DATASET], query: $q, count: 100, orFilters: $f}) { searchResults { entity { urn } } } }';
const AGGREGATE = 'query($facets: [String]) { aggregateAcrossEntities(input: {types: [DATASET], query: "*", facets: $facets}) { facets { field aggregations { value count } } } }';

for (const backend of searchBackends()) {
  describe(`search input rules on ${backend.name}`, () => {
    let s: TestServer;
    const settle = () => s.svc.catalog.searchOutbox.deliverAll();

    async function query(q: string): Promise<string[]> {
      const res = await s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}&count=100`);
      return (JSON.parse(await text(res, 200)) as { entities: { urn: string }[] }).entities.map((e) => e.urn);
    }

    before(async () => {
      s = await startTestServer(backend.env);
      for (const f of FIELDS) await text(await writeDefinition(s, propertyUrn(`test.rules.${f}`), definitionOf(`test.rules.${f}`)), 200);
      await text(await writeDefinition(s, propertyUrn('test.rules.day'), definitionOf('test.rules.day', { valueType: 'urn:li:dataType:svc.date' })), 200);
      for (const [i, urn] of URNS.entries()) {
        await createDataset(s, `rules${i}`);
        const values: Assignment[] = FIELDS.map((f) => ({ propertyUrn: propertyUrn(`test.rules.${f}`), values: [{ string: bit(i, f) }] }));
        values.push({ propertyUrn: propertyUrn('test.rules.day'), values: [{ string: DAY(i) }] });
        await text(await setValues(s, urn, values), 200);
      }
      await settle();
    });
    after(async () => {
      await s?.close();
    });

    test('negations nested in every spelling find what the reference evaluator finds (NOT NOT x is x)', async () => {
      await fc.assert(
        fc.asyncProperty(formula, fc.array(fc.nat(), { minLength: 32, maxLength: 32 }), async (f, choices) => {
          let k = 0;
          const q = render(f, () => choices[k++ % choices.length]!);
          assert.deepEqual(await query(q), URNS.filter((_, i) => holds(f, i)).sort(), q);
        }),
        { numRuns: 40 },
      );
      // The issue's cases.
      const x = 'structuredProperties.test_rules_a:1';
      const withA = URNS.filter((_, i) => bit(i, 'a') === '1').sort();
      for (const q of [`NOT NOT ${x}`, `!!${x}`, `NOT (NOT ${x})`, `--${x}`, `!-${x}`]) assert.deepEqual(await query(q), withA, q);
    });

    test('operator sequences with a missing clause are 400s naming the operator, in a query string and in GraphQL', async () => {
      const x = 'structuredProperties.test_rules_a:1';
      const cases = fc.sample(
        fc.oneof(
          fc.tuple(fc.constantFrom('AND', 'OR', '&&', '||', 'NOT'), fc.constantFrom('AND', 'OR', '&&', '||')).map(([o1, o2]) => ({ q: `${x} ${o1} ${o2} ${x}`, message: `${o1} needs a clause after it` })),
          fc.constantFrom('AND', 'OR', '&&', '||').map((o) => ({ q: `${o} ${x}`, message: `${o} needs a clause before it` })),
          fc.constantFrom('AND', 'OR', '&&', '||', 'NOT').map((o) => ({ q: `(${x} ${o})`, message: `${o} needs a clause after it` })),
        ),
        12,
      );
      for (const { q, message } of cases) {
        await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}`), 400, message);
        const e = await gqlError(s, SCROLL, { q });
        assert.ok(e.message.includes(message), `${q}: ${e.message}`);
      }
    });

    test('a field name no property can have is a 400 saying what was expected: query strings, filters, facets', async () => {
      const ALPHABET = ['/', '(', ')', '\\', ':', '..', '.', ' ', '*', '"', '#'];
      const part = fc.array(fc.constantFrom('x', '1', ...ALPHABET), { maxLength: 5 }).map((cs) => cs.join(''));
      const parts = fc.sample(part.filter((p) => !/^[\p{L}\p{N}_-]+(\.[\p{L}\p{N}_-]+)*$/u.test(p)), 12);
      for (const p of ['', ...parts]) {
        const field = `structuredProperties.${p}`;
        // In a query string the field is escaped as Lucene escapes (a query that parses).
        const escaped = field.replace(/[\\/():"* ]/g, '\\$&');
        await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(`${escaped}:1`)}`), 400, `Unknown search field ${JSON.stringify(field)}`, 'expected a qualified name');
        const e = await gqlError(s, SCROLL, { q: '*', f: [{ and: [{ field, condition: 'EXISTS' }] }] });
        assert.ok(e.message.includes(`Unknown search field ${JSON.stringify(field)}`), e.message);
        const facet = await gqlError(s, AGGREGATE, { facets: [field] });
        assert.ok(facet.message.includes(`Unknown search facet ${JSON.stringify(field)}`), facet.message);
      }
      // The issue's case, unescaped: the colon ends the field, so it is the field's name that is missing.
      await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent('structuredProperties.:a')}`), 400, `Unknown search field "structuredProperties."`);
      // A field of no property, that one could have, still matches nothing.
      assert.deepEqual(await query('structuredProperties.no.such.property:1'), []);
    });

    test('a date that does not exist is a 400 saying why, in a query, a range and a filter; the day before is found', async () => {
      const F = 'structuredProperties.test_rules_day';
      const impossible = fc.sample(
        fc.oneof(
          fc.constantFrom('2024-02-30', '2024-02-31', '2023-02-29', '2100-02-29', '2024-04-31', '2024-06-31', '2024-09-31', '2024-11-31'),
          fc.tuple(fc.integer({ min: 1000, max: 9999 }), fc.constantFrom(0, 13, 14, 99), fc.integer({ min: 1, max: 28 })).map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
          fc.tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom(0, 32, 40)).map(([m, d]) => `2024-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
          fc.constantFrom('2024-02-24T24:00:00Z', '2024-02-24T23:60:00Z', '2024-02-24T23:59:60Z'),
        ),
        10,
      );
      for (const d of impossible) {
        for (const q of [`${F}:${d.replaceAll(':', '\\:')}`, `${F}:>${d.replaceAll(':', '\\:')}`, `${F}:[${d.replaceAll(':', '\\:')} TO *]`]) {
          await expectValidationError(s, () => s.request(`/openapi/v3/entity/dataset?query=${encodeURIComponent(q)}`), 400, `holds dates: ${JSON.stringify(d)} is not a date: `, 'does not exist');
        }
        const e = await gqlError(s, SCROLL, { q: '*', f: [{ and: [{ field: 'structuredProperties.test.rules.day', condition: 'GREATER_THAN', values: [d] }] }] });
        assert.ok(e.message.includes('does not exist'), e.message);
      }
      assert.deepEqual(await query(`${F}:2024-02-29`), [URNS[7]]);
      assert.deepEqual(await query(`${F}:>2024-02-27`), [URNS[6], URNS[7]].sort());
    });

    test('every qualified name a definition accepts is found by its field: query string (underscored and dotted), filter and facet', async () => {
      const PART = fc.array(fc.constantFrom('a', 'Z', '7', '_', '-', 'ü', '名', 'ß'), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''));
      // Generated names, and one under _versioned that is no versioned field (it was read as one, and matched nothing).
      const names = [...fc.sample(fc.array(PART, { minLength: 1, maxLength: 3 }).map((ps) => `test.found.${ps.join('.')}`), 16), '_versioned.found'];
      const fields = new Set<string>();
      let n = 0;
      for (const qn of names) {
        const field = qn.replaceAll('.', '_');
        if (fields.has(field)) continue; // one property per search field
        fields.add(field);
        const urn = propertyUrn(qn);
        await text(await writeDefinition(s, urn, definitionOf(qn)), 200);
        const ds = datasetUrn(`found${n++}`);
        await createDataset(s, `found${n - 1}`);
        await text(await setValues(s, ds, [{ propertyUrn: urn, values: [{ string: 'v-1' }] }]), 200);
        await settle();
        assert.deepEqual(await query(`structuredProperties.${field}:v-1`), [ds], `${qn} underscored`);
        assert.deepEqual(await query(`structuredProperties.${qn}:"v-1"`), [ds], `${qn} dotted`);
        assert.deepEqual(await query(`_exists_:structuredProperties.${field}`), [ds], `${qn} exists`);
        const found = await gqlData(s, SCROLL, { q: '*', f: [{ and: [{ field: `structuredProperties.${qn}`, values: ['v-1'] }] }] });
        assert.deepEqual(found.scrollAcrossEntities.searchResults.map((r: { entity: { urn: string } }) => r.entity.urn), [ds], `${qn} filter`);
        const facets = await gqlData(s, AGGREGATE, { facets: [`structuredProperties.${qn}`] });
        assert.deepEqual(facets.aggregateAcrossEntities.facets[0].aggregations, [{ value: 'v-1', count: 1 }], `${qn} facet`);
      }
    });
  });
}
