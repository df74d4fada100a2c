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
import { compactUtc } from '../../server/src/dates.ts';
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
