/**
 * The input rules of structured property definitions, as classes of input rather than cases, through
 * every surface that writes a definition: OpenAPI v2 and v3, Rest.li `ingestProposal`, GraphQL and
 * the CLI's file. Generated inputs of each class are refused with a 400 that says what was expected
 * and change nothing (the database fingerprint), or are accepted; the unit tests next to the rules
 * (server/src/properties/*.test.ts) cover the classes exhaustively, these check that each surface
 * applies the one rule.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { compactUtc } from '../../server/src/shared/dates.ts';
import { expectRejected } from '../support/expectRejected.ts';
import { runSvc } from '../support/cli.ts';
import { definitionOf, propertyUrn, writeDefinition, type Definition } from '../support/structuredProperties.ts';
import { startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
let dir: string;
before(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-definition-rules-'));
});
after(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const DAY = 24 * 60 * 60 * 1000;

/** Rest.li `ingestProposal` of a definition, as DataHub's Python SDK emits it. */
function ingestDefinition(urn: string, definition: Definition): Promise<Response> {
  return s.request('/aspects?action=ingestProposal', {
    method: 'POST',
    headers: { 'X-RestLi-Protocol-Version': '2.0.0' },
    body: JSON.stringify({
      proposal: { entityType: 'structuredProperty', entityUrn: urn, changeType: 'UPSERT', aspectName: 'propertyDefinition', aspect: { value: JSON.stringify(definition), contentType: 'application/json' } },
    }),
  });
}

type Surface = 'v3' | 'v2' | 'restli';
const SURFACES: Surface[] = ['v3', 'v2', 'restli'];

/** Writes a definition through one surface. */
const write = (surface: Surface, urn: string, definition: Definition) => (surface === 'restli' ? ingestDefinition(urn, definition) : writeDefinition(s, urn, definition, surface));

/** A refusal through any surface: 400, the message (Rest.li's body or OpenAPI's) holding `expected`, nothing changed. */
async function refused(surface: Surface, urn: string, definition: Definition, ...expected: (string | RegExp)[]): Promise<string> {
  let message = '';
  await expectRejected(s, () => write(surface, urn, definition), 400, (raw) => {
    message = (JSON.parse(raw) as { message: string }).message;
    for (const e of expected) assert.ok(typeof e === 'string' ? message.includes(e) : e.test(message), `expected ${e} in: ${message}`);
  });
  return message;
}

/** Versions that are no real date and time: each part of the 14 digits just past its range, the rest valid. */
const unrealVersion = fc
  .tuple(
    fc.integer({ min: 1000, max: 2025 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 23 }),
    fc.integer({ min: 0, max: 59 }),
    fc.integer({ min: 0, max: 59 }),
    fc.constantFrom('month', 'day', 'hour', 'minute', 'second', 'leap'),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([y, mo, d, h, mi, sec, broken, k]) => {
    const parts = { y, mo, d, h, mi, sec };
    if (broken === 'month') parts.mo = [0, 13, 20, 99][k]!;
    if (broken === 'day') [parts.mo, parts.d] = ([[2, 30], [4, 31], [1, 0], [12, 32]] as const)[k]!;
    if (broken === 'hour') parts.h = [24, 25, 30, 99][k]!;
    if (broken === 'minute') parts.mi = [60, 61, 75, 99][k]!;
    if (broken === 'second') parts.sec = [60, 61, 75, 99][k]!;
    if (broken === 'leap') [parts.y, parts.mo, parts.d] = ([[2023, 2, 29], [1900, 2, 29], [2100, 2, 29], [2019, 2, 29]] as const)[k]!;
    return { broken: broken === 'leap' ? 'day' : broken, version: `${pad(parts.y, 4)}${pad(parts.mo)}${pad(parts.d)}${pad(parts.h)}${pad(parts.mi)}${pad(parts.sec)}` };
  });

/** Real versions more than a day ahead of now, up to the year 9999. */
const aheadVersion = fc.integer({ min: Date.now() + DAY + 60_000, max: Date.UTC(9999, 11, 31, 23, 59, 59) }).map((ms) => compactUtc(ms - (ms % 1000)));

describe('versions', () => {
  test('a version that is no real yyyyMMddHHmmss date-time is refused on every surface, saying which part is wrong', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(unrealVersion, fc.constantFrom(...SURFACES), async ({ broken, version }, surface) => {
        const qn = `test.rules.unreal${n++}`;
        await refused(surface, propertyUrn(qn), definitionOf(qn, { version }), `Invalid version specified: ${version} is not a date and time yyyyMMddHHmmss: ${broken} `);
      }),
      { numRuns: 30 },
    );
  });

  test('a version more than a day ahead of the clock is refused on every surface; up to a day ahead is accepted', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(aheadVersion, fc.constantFrom(...SURFACES), async (version, surface) => {
        const qn = `test.rules.ahead${n++}`;
        await refused(surface, propertyUrn(qn), definitionOf(qn, { version }), `Invalid version specified: ${version} is more than a day ahead of the server's clock`);
      }),
      { numRuns: 20 },
    );
    for (const surface of SURFACES) {
      const qn = `test.rules.tomorrow_${surface}`;
      const version = compactUtc(Date.now() + DAY - 60_000);
      await text(await write(surface, propertyUrn(qn), definitionOf(qn, { version })), 200);
    }
  });

  test('99999999999999 and 20241301000000, the issue’s examples, are refused', async () => {
    await refused('v3', propertyUrn('test.rules.nines'), definitionOf('test.rules.nines', { version: '99999999999999' }), 'Invalid version specified: 99999999999999 is not a date and time');
    await refused('v3', propertyUrn('test.rules.month13'), definitionOf('test.rules.month13', { version: '20241301000000' }), 'month 13 does not exist (01-12)');
    await refused('v3', propertyUrn('test.rules.nines'), definitionOf('test.rules.nines', { version: '99991231235959' }), 'more than a day ahead');
  });

  test('a refused breaking change says what lifts it (a version greater than the current one, named); the version it suggests is accepted', async () => {
    const qn = 'test.rules.breaking';
    const urn = propertyUrn(qn);
    await text(await writeDefinition(s, urn, definitionOf(qn, { cardinality: 'MULTIPLE', version: '20240614080000' })), 200);
    for (const surface of SURFACES) {
      const message = await refused(
        surface,
        urn,
        definitionOf(qn, { cardinality: 'SINGLE' }),
        'Property definition cardinality cannot be changed from MULTI to SINGLE',
        /A breaking change needs a version greater than the current one, 20240614080000: give the time of the change as yyyyMMddHHmmss, e\.g\. [0-9]{14}/,
      );
      assert.ok(message.indexOf('cannot be changed') < message.indexOf('A breaking change needs'), 'DataHub’s message first');
      await refused(surface, urn, definitionOf(qn, { cardinality: 'SINGLE', version: '20240101000000' }), 'greater than the current one, 20240614080000 (20240101000000 is not)');
    }
    const message = await refused('v3', urn, definitionOf(qn, { cardinality: 'SINGLE' }), 'A breaking change needs');
    const suggested = message.match(/e\.g\. ([0-9]{14})/)![1]!;
    const stored = JSON.parse(await text(await writeDefinition(s, urn, definitionOf(qn, { cardinality: 'SINGLE', version: suggested })), 200));
    assert.equal(stored.propertyDefinition.value.version, suggested);
  });

  test('the CLI file: a version that is no date-time is refused with the server’s message; a real one is stored', async () => {
    const path = join(dir, 'versions.yaml');
    writeFileSync(path, '- id: test.rules.cli\n  type: string\n  entity_types: [dataset]\n  version: "20240230000000"\n');
    const bad = await runSvc(s.url, ['properties', 'upsert', '-f', path], { HOME: dir });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /Invalid version specified: 20240230000000 is not a date and time yyyyMMddHHmmss: day 30 does not exist: February 2024 has 29 days/);
    writeFileSync(path, '- id: test.rules.cli\n  type: string\n  entity_types: [dataset]\n  version: "20240229235959"\n');
    const good = await runSvc(s.url, ['properties', 'upsert', '-f', path], { HOME: dir });
    assert.equal(good.code, 0, good.stderr);
  });
});

/** GraphQL createStructuredProperty with an id (the qualified name) and the given allowed values. */
function createByGraphQL(qualifiedName: string, allowedValues?: { stringValue: string }[]): Promise<Response> {
  return s.request('/api/graphql', {
    method: 'POST',
    body: JSON.stringify({
      query: 'mutation($input: CreateStructuredPropertyInput!) { createStructuredProperty(input: $input) { urn } }',
      variables: { input: { id: qualifiedName, qualifiedName, valueType: 'urn:li:dataType:string', entityTypes: ['urn:li:entityType:dataset'], ...(allowedValues ? { allowedValues } : {}) } },
    }),
  });
}

/** A GraphQL refusal: HTTP 200, one BAD_REQUEST error holding `expected`, nothing changed. */
async function refusedByGraphQL(req: () => Promise<Response>, expected: string): Promise<void> {
  await expectRejected(s, req, 200, (raw) => {
    const body = JSON.parse(raw) as { data: unknown; errors?: { message: string; extensions?: { code?: unknown } }[] };
    assert.equal(body.errors?.length, 1, raw);
    assert.ok(body.errors[0]!.message.includes(expected), `expected ${expected} in: ${raw}`);
  });
}

/** `svc properties upsert -f` of a one-property file. */
function upsertByCli(file: string, yaml: string) {
  const path = join(dir, file);
  writeFileSync(path, yaml);
  return runSvc(s.url, ['properties', 'upsert', '-f', path], { HOME: dir });
}

describe('qualified names', () => {
  /** Names over letters, digits, _, -, dots and the characters of query syntax, paths and URNs. */
  const ALPHABET = [...'ab1_-..', 'ü', '名', '/', '(', ')', '\\', ':', ',', '*', '?', '"', '#', '%', '&', '@', '[', '+', '!'];
  const name = fc.array(fc.constantFrom(...ALPHABET), { minLength: 1, maxLength: 8 }).map((cs) => `test.names.${cs.join('')}`);
  const dotted = (n: string) => /^[\p{L}\p{M}\p{N}_-]+(\.[\p{L}\p{M}\p{N}_-]+)*$/u.test(n);
  const unpaired = (n: string) => {
    let depth = 0;
    for (const ch of n) if ((depth += ch === '(' ? 1 : ch === ')' ? -1 : 0) < 0) return true;
    return depth !== 0;
  };

  test('a name that is no dotted name is refused on every surface, naming the character or the empty name; a dotted one is stored', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(name, fc.constantFrom<Surface | 'graphql'>(...SURFACES, 'graphql'), async (qn, surface) => {
        fc.pre(!seen.has(qn));
        seen.add(qn);
        const urn = propertyUrn(qn);
        if (dotted(qn)) {
          const res = surface === 'graphql' ? await createByGraphQL(qn) : await write(surface, urn, definitionOf(qn));
          const body = await text(res, 200);
          if (surface === 'graphql') assert.equal(JSON.parse(body).data.createStructuredProperty.urn, urn, body);
          return;
        }
        const bad = [...qn].find((ch) => ch !== '.' && !/[\p{L}\p{M}\p{N}_-]/u.test(ch));
        // A parenthesis that does not pair is no URN at all: DataHub's 400 for it comes first.
        const expected = unpaired(qn) ? `Invalid urn!: ${urn}` : `Qualified name ${qn} is not a dotted name: ${bad === undefined ? 'it has an empty name' : JSON.stringify(bad)}`;
        await expectRejected(s, () => (surface === 'graphql' ? createByGraphQL(qn) : write(surface, urn, definitionOf(qn))), surface === 'graphql' ? 200 : 400, (raw) => {
          const body = JSON.parse(raw) as { error?: string; message?: string; errors?: { message: string }[] };
          const message = body.errors?.[0]?.message ?? body.message ?? body.error ?? '';
          assert.ok(message.includes(expected), `${surface}: expected ${expected} in: ${raw}`);
        });
      }),
      { numRuns: 60 },
    );
  });

  test('the CLI file: a name with a / is refused with the server’s message', async () => {
    const r = await upsertByCli('name.yaml', '- id: test.names.cli/x\n  type: string\n  entity_types: [dataset]\n');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /Qualified name test\.names\.cli\/x is not a dotted name: "\/" is not allowed/);
  });
});

describe('allowed values', () => {
  const EMPTY = 'allowedValues: must list at least one value (an empty list would allow none); leave allowedValues out to allow any value of the valueType';

  test('allowedValues: [] is refused on every surface, and nothing is written', async () => {
    for (const surface of SURFACES) await refused(surface, propertyUrn(`test.allowed.empty_${surface}`), definitionOf(`test.allowed.empty_${surface}`, { allowedValues: [] }), EMPTY);
    await refusedByGraphQL(() => createByGraphQL('test.allowed.emptyGraphql', []), EMPTY);
    const r = await upsertByCli('allowed.yaml', '- id: test.allowed.emptyCli\n  type: string\n  entity_types: [dataset]\n  allowed_values: []\n');
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(EMPTY), r.stderr);
  });

  test('a list of values, or none at all, is accepted', async () => {
    await text(await writeDefinition(s, propertyUrn('test.allowed.some'), definitionOf('test.allowed.some', { allowedValues: [{ value: { string: 'a' } }] })), 200);
    await text(await writeDefinition(s, propertyUrn('test.allowed.none'), definitionOf('test.allowed.none')), 200);
  });
});
