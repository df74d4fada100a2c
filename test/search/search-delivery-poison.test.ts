/**
 * Search delivery at the extremes, on both backends (issue 48: one request must never stop search for
 * everyone). Every value the write route accepts becomes searchable: string values from 2 KB to the
 * largest request body, multi-byte text whose byte length is not its length, URNs at their length
 * limits, the longest structured-property field names; and a write made after them is searchable
 * promptly. An entity whose document the backend refuses (a real refusal: a Postgres constraint, an
 * OpenSearch mapping that does not take its value) holds back no other: it is listed with its URN,
 * error and age by `GET /api/search/delivery`, counted by `/metrics`, `/ready` shows the lag, it is
 * tried again with a growing pause, it survives a restart, and it is delivered once mended.
 *
 * Values are random (incompressible): Postgres compresses an index entry before it measures it, so a
 * long run of one character fits where real text does not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@opensearch-project/opensearch';
import { SYSTEM } from '../../server/src/auth/authorize.ts';
import type { Criterion } from '../../server/src/search/expr.ts';
import { urlEncodedLength } from '../../server/src/urn/urn.ts';
import { createDataset, createEntity, datasetUrn, propertyUrn, readValues, setValues, writeDefinition, type Value } from '../support/structuredProperties.ts';
import { pollUntil } from '../support/poll.ts';
import { opensearchUrl, searchBackends } from '../support/searchBackends.ts';
import { enc, sql, startTestServer, text, type TestServer } from '../support/testServer.ts';

const TEXT = 'poison.text';
const NUMBER = 'poison.number';
const PAIR = 'poison.pair';
/** A qualified name as long as a property URN allows (512 bytes URL-encoded), versioned: the longest field name. */
const LONG_NAME = `poison.${'n'.repeat(512 - urlEncodedLength('urn:li:structuredProperty:poison.'))}`;
const LONG_NUMBER = `poison.${'m'.repeat(512 - urlEncodedLength('urn:li:structuredProperty:poison.'))}`;
const VERSION = '20240101000000';
const BOTH_TYPES = ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.schemaField'];
/** The server's largest request body (SVC_MAX_BODY_BYTES, default). */
const MAX_BODY = 5 * 1024 * 1024;

/** `n` random characters of `[A-Za-z0-9_-]`. */
const ascii = (n: number) => randomBytes(Math.ceil((n * 3) / 4) + 3).toString('base64url').slice(0, n);
/** `n` random characters drawn from `from`..`to` (code points), surrogates left out. */
function codePoints(n: number, from: number, to: number): string {
  const out: string[] = [];
  const bytes = randomBytes(n * 4);
  for (let i = 0; i < n; i++) {
    let cp = from + (bytes.readUInt32LE(i * 4) % (to - from));
    if (cp >= 0xd800 && cp <= 0xdfff) cp -= 0x800;
    out.push(String.fromCodePoint(cp));
  }
  return out.join('');
}
/** 3 bytes in UTF-8, one UTF-16 code unit each. */
const threeByte = (n: number) => codePoints(n, 0x0800, 0xffff);
/** 4 bytes in UTF-8, two UTF-16 code units each. */
const fourByte = (n: number) => codePoints(n, 0x10000, 0x10ffff);
/** 1 to 4 bytes each. */
const mixed = (n: number) => Array.from({ length: n }, (_, i) => [ascii, (k: number) => codePoints(k, 0x80, 0x7ff), threeByte, fourByte][i % 4]!(1)).join('');

/** A URN of exactly `bytes` bytes URL-encoded: `head`, then `fill` characters, then `tail`. */
function urnOfLength(head: string, tail: string, bytes: number, fill: (n: number) => string = ascii): string {
  let middle = '';
  while (urlEncodedLength(`${head}${middle}${tail}`) < bytes) {
    const room = bytes - urlEncodedLength(`${head}${middle}${tail}`);
    const more = fill(Math.max(1, Math.floor(room / 12)));
    if (urlEncodedLength(`${head}${middle}${more}${tail}`) > bytes) middle += ascii(1);
    else middle += more;
  }
  const urn = `${head}${middle}${tail}`;
  assert.equal(urlEncodedLength(urn), bytes);
  return urn;
}

/** The start of a schemaField URN, before its field path and `)`. */
const SCHEMA_FIELD = `urn:li:schemaField:(${datasetUrn('poison_parent')},`;

for (const backend of searchBackends()) {
  describe(`search delivery at the extremes on ${backend.name}`, () => {
    const prefix = `p${randomBytes(5).toString('hex')}`;
    const env = { ...backend.env, ...(backend.name === 'opensearch' ? { INDEX_PREFIX: prefix, ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS: '0' } : {}) };
    let s: TestServer;
    /** Servers started again on the same database (closed at the end). */
    const others: TestServer[] = [];

    before(async () => {
      s = await startTestServer(env);
      const define = async (qualifiedName: string, valueType: string, extra: Record<string, unknown> = {}) =>
        text(await writeDefinition(s, propertyUrn(qualifiedName), { qualifiedName, valueType, entityTypes: BOTH_TYPES, cardinality: 'MULTIPLE', ...extra }), 200);
      await define(TEXT, 'urn:li:dataType:svc.string');
      await define(NUMBER, 'urn:li:dataType:svc.number');
      await define(PAIR, 'urn:li:dataType:svc.string');
      await define(LONG_NAME, 'urn:li:dataType:svc.string', { version: VERSION });
      await define(LONG_NUMBER, 'urn:li:dataType:svc.number', { version: VERSION });
    });
    after(async () => {
      for (const o of others) await o.close();
      await s?.close();
    });

    /** The URNs (sorted) of the entities of `entityType` matching every criterion, searched in-process (long values do not fit a URL). */
    async function find(criteria: Criterion[], entityType = 'dataset'): Promise<string[]> {
      const r = await s.svc.catalog.search.search(SYSTEM, { entityTypes: [entityType], filters: [{ and: criteria }], count: 100, aspects: ['status'] });
      return r.entities.map((e) => e.urn).sort();
    }
    const exact = (qualifiedName: string, value: string, entityType = 'dataset') => find([{ field: `structuredProperties.${qualifiedName}`, values: [value] }], entityType);

    async function delivery(): Promise<{ lagSeconds: number; failingEntities: number; failing: { urn: string; error: string; attempts: number; ageSeconds: number; lastAttemptAt: string; nextAttemptAt: string }[] }> {
      return JSON.parse(await text(await s.request('/api/search/delivery'), 200));
    }
    async function metric(name: string): Promise<number> {
      const body = await (await s.request('/metrics', { token: null })).text();
      return Number(body.match(new RegExp(`^${name} (\\S+)`, 'm'))?.[1] ?? NaN);
    }
    async function ready(): Promise<{ status: number; body: { search: string; searchDelivery: { lagSeconds: number; outboxDepth: number; failingEntities: number } } }> {
      const res = await s.request('/ready', { token: null });
      return { status: res.status, body: JSON.parse(await res.text()) };
    }

    test('string values from 2 KB to the largest body, multi-byte ones too, are each found by exact match; a write after them follows', async () => {
      const empty = JSON.stringify({ value: { properties: [{ propertyUrn: propertyUrn(TEXT), values: [{ string: '' }] }] } });
      const largest = MAX_BODY - Buffer.byteLength(empty);
      const values: [string, string][] = [
        ['2 KB', ascii(2048)],
        ['2.7 KB', ascii(2700)],
        ['just over a btree entry (2,704 bytes)', ascii(2705)],
        ['8 KB', ascii(8 * 1024)],
        ['255 four-byte characters (just under the Postgres key)', fourByte(255)],
        ['256 four-byte characters (the Postgres key)', fourByte(256)],
        ['1,000 three-byte characters (3,000 bytes)', threeByte(1000)],
        ['8,191 three-byte characters (the longest OpenSearch term: 24,573 bytes)', threeByte(8191)],
        ['8,192 three-byte characters (hashed on OpenSearch)', threeByte(8192)],
        ['9,000 four-byte characters (18,000 code units, 36,000 bytes: over Lucene\'s term limit)', fourByte(9000)],
        ['5,000 mixed characters', mixed(5000)],
        ['40 KB', ascii(40 * 1024)],
        [`the largest the write route accepts (${largest} bytes)`, ascii(largest)],
      ];
      const urns: string[] = [];
      for (const [i, [, value]] of values.entries()) {
        const urn = await createDataset(s, `extreme${i}`);
        await text(await setValues(s, urn, [{ propertyUrn: propertyUrn(TEXT), values: [{ string: value }] }]), 200);
        urns.push(urn);
      }
      // One byte more is refused whole, before anything is stored.
      const over = await setValues(s, await createDataset(s, 'extreme_over'), [{ propertyUrn: propertyUrn(TEXT), values: [{ string: ascii(largest + 1) }] }]);
      assert.equal(over.status, 413, await over.text());
      const later = await createDataset(s, 'extreme_later');
      await text(await setValues(s, later, [{ propertyUrn: propertyUrn(TEXT), values: [{ string: 'written after the extremes' }] }]), 200);
      await pollUntil('the write after the extremes searchable', () => exact(TEXT, 'written after the extremes'), (got) => got.length === 1);
      for (const [i, [what, value]] of values.entries()) {
        assert.deepEqual(await pollUntil(what, () => exact(TEXT, value), (got) => got.length > 0), [urns[i]], what);
      }
      // No value of them matches another's: a value's start is not the value.
      assert.deepEqual(await exact(TEXT, values[2]![1].slice(0, 2704)), []);
      assert.deepEqual(await exact(TEXT, values[5]![1].slice(0, -2)), []);
      const state = await delivery();
      assert.equal(state.failingEntities, 0, JSON.stringify(state.failing));
    });

    test('values longer than a key keep their order, prefixes and exact answers (long values sharing a start)', async () => {
      // Longer than the Postgres key (256 characters), shorter than the longest term OpenSearch builds a
      // range or wildcard query of (1,000 characters: a longer one is a 400 there).
      const start = ascii(700);
      const pair = {
        a: { urn: datasetUrn('pair_a'), value: `${start}A` },
        b: { urn: datasetUrn('pair_b'), value: `${start}B` },
        c: { urn: datasetUrn('pair_c'), value: start.slice(0, 100) },
        d: { urn: datasetUrn('pair_d'), value: '~' },
      };
      for (const [k, { value }] of Object.entries(pair)) {
        await createDataset(s, `pair_${k}`);
        await text(await setValues(s, datasetUrn(`pair_${k}`), [{ propertyUrn: propertyUrn(PAIR), values: [{ string: value }] }]), 200);
      }
      const field = `structuredProperties.${PAIR}`;
      await pollUntil('the pairs searchable', () => find([{ field, condition: 'EXISTS' }]), (got) => got.length === 4);
      const of = (...keys: (keyof typeof pair)[]) => keys.map((k) => pair[k].urn).sort();
      const cases: [Criterion, string[]][] = [
        [{ field, values: [pair.a.value] }, of('a')],
        [{ field, values: [pair.b.value, pair.d.value] }, of('b', 'd')],
        [{ field, values: [start] }, []],
        [{ field, condition: 'START_WITH', values: [start] }, of('a', 'b')],
        [{ field, condition: 'START_WITH', values: [start.slice(0, 100)] }, of('a', 'b', 'c')],
        [{ field, condition: 'START_WITH', values: [start.slice(0, 300)] }, of('a', 'b')],
        [{ field, condition: 'CONTAIN', values: [start.slice(300, 400)] }, of('a', 'b')],
        [{ field, condition: 'END_WITH', values: [`${start.slice(-300)}A`] }, of('a')],
        [{ field, condition: 'GREATER_THAN', values: [pair.a.value] }, of('b', 'd')],
        [{ field, condition: 'GREATER_THAN_OR_EQUAL_TO', values: [pair.a.value] }, of('a', 'b', 'd')],
        [{ field, condition: 'LESS_THAN', values: [pair.b.value] }, of('a', 'c')],
        [{ field, condition: 'LESS_THAN_OR_EQUAL_TO', values: [start] }, of('c')],
        [{ field, condition: 'GREATER_THAN', values: [pair.c.value] }, of('a', 'b', 'd')],
        [{ field, condition: 'LESS_THAN', values: [pair.c.value] }, []],
      ];
      for (const [criterion, want] of cases) {
        assert.deepEqual(await find([criterion]), want, `${criterion.condition ?? 'EQUAL'} (${criterion.values![0]!.length} characters)`);
      }
    });

    test('generated values around the key length: equality, ranges and prefixes answer as the values compare (code point order)', async () => {
      // Values sharing starts of 0 to 600 characters, so that keys (256 characters) tie; suffixes of 1- to
      // 4-byte characters; bounds and prefixes taken from the values, cut or lengthened by a character.
      // Bounds stay under 1,000 bytes: OpenSearch refuses a longer range bound or prefix (a 400).
      const GEN = 'poison.gen';
      await text(await writeDefinition(s, propertyUrn(GEN), { qualifiedName: GEN, valueType: 'urn:li:dataType:svc.string', entityTypes: BOTH_TYPES }), 200);
      const starts = [...[0, 100, 255, 256, 257, 300].map((n) => mixed(n)), ascii(600)];
      const alphabet = ['a', 'b', 'é', '€', '😀', '~'];
      let seed = randomBytes(4).readUInt32LE(0);
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) >>> 0;
        return seed % n;
      };
      const pick = <T>(xs: T[]): T => xs[next(xs.length)]!;
      const suffix = () => Array.from({ length: next(4) }, () => pick(alphabet)).join('');
      const values = [...new Set(Array.from({ length: 36 }, () => `${pick(starts)}${suffix()}`).filter((v) => v !== ''))];
      const urnOf = new Map<string, string>();
      for (const [i, value] of values.entries()) {
        const urn = await createDataset(s, `gen${i}`);
        await text(await setValues(s, urn, [{ propertyUrn: propertyUrn(GEN), values: [{ string: value }] }]), 200);
        urnOf.set(value, urn);
      }
      const field = `structuredProperties.${GEN}`;
      await pollUntil('the generated values searchable', () => find([{ field, condition: 'EXISTS' }]), (got) => got.length === values.length);
      // Postgres (collation C) and OpenSearch (keyword terms) both order by UTF-8 bytes: code points.
      const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
      const chars = (v: string) => [...v];
      const near = () => {
        const v = chars(pick(values));
        const k = next(3);
        return k === 0 ? v.join('') : k === 1 ? v.slice(0, -1).join('') : `${v.join('')}${pick(alphabet)}`;
      };
      const conditions: [Criterion['condition'], (v: string, b: string) => boolean][] = [
        ['EQUAL', (v, b) => v === b],
        ['GREATER_THAN', (v, b) => cmp(v, b) > 0],
        ['GREATER_THAN_OR_EQUAL_TO', (v, b) => cmp(v, b) >= 0],
        ['LESS_THAN', (v, b) => cmp(v, b) < 0],
        ['LESS_THAN_OR_EQUAL_TO', (v, b) => cmp(v, b) <= 0],
        ['START_WITH', (v, b) => v.startsWith(b)],
      ];
      for (let i = 0; i < 60; i++) {
        const [condition, holds] = pick(conditions);
        const bound = condition === 'START_WITH' ? chars(pick(values)).slice(0, pick([1, 100, 255, 256, 257, 300, 601])).join('') : near();
        if (bound === '') continue;
        const want = values.filter((v) => holds(v, bound)).map((v) => urnOf.get(v)!).sort();
        assert.deepEqual(await find([{ field, condition, values: [bound] }]), want, `${condition} a bound of ${chars(bound).length} characters`);
      }
    });

    test('URNs at their length limits and the longest field names: accepted, searchable by every value, key field and URN', async () => {
      const entities = [
        { what: 'a dataset URN of 512 bytes', type: 'dataset', urn: urnOfLength('urn:li:dataset:(urn:li:dataPlatform:hive,', ',PROD)', 512) },
        { what: 'a schemaField URN of 2,048 bytes', type: 'schemaField', urn: urnOfLength(SCHEMA_FIELD, ')', 2048) },
        { what: 'a schemaField URN of 2,048 bytes of multi-byte text', type: 'schemaField', urn: urnOfLength(SCHEMA_FIELD, ')', 2048, mixed) },
      ];
      const values = new Map<string, { text: string; name: string; number: number; longNumber: number }>();
      for (const [i, e] of entities.entries()) {
        await createEntity(s, e.type, e.urn);
        const v = { text: ascii(3000), name: mixed(700), number: 1000.5 + i, longNumber: -7 - i };
        values.set(e.urn, v);
        const assign = (p: string, value: Value) => ({ propertyUrn: propertyUrn(p), values: [value] });
        const res = await setValues(s, e.urn, [assign(TEXT, { string: v.text }), assign(LONG_NAME, { string: v.name }), assign(NUMBER, { double: v.number }), assign(LONG_NUMBER, { double: v.longNumber })], 'v3', e.type);
        await text(res, 200);
      }
      const later = await createDataset(s, 'limits_later');
      await text(await setValues(s, later, [{ propertyUrn: propertyUrn(TEXT), values: [{ string: 'written after the long URNs' }] }]), 200);
      await pollUntil('the write after the long URNs searchable', () => exact(TEXT, 'written after the long URNs'), (got) => got.length === 1);
      for (const e of entities) {
        const v = values.get(e.urn)!;
        const want = [e.urn];
        assert.deepEqual(await pollUntil(`${e.what}: by its text`, () => exact(TEXT, v.text, e.type), (got) => got.length > 0), want);
        assert.deepEqual(await exact(LONG_NAME, v.name, e.type), want, `${e.what}: by the longest field name`);
        assert.deepEqual(await exact(NUMBER, String(v.number), e.type), want, `${e.what}: by a number`);
        assert.deepEqual(await exact(LONG_NUMBER, String(v.longNumber), e.type), want, `${e.what}: by a number under the longest field name`);
        assert.deepEqual(await find([{ field: 'urn', values: [e.urn] }], e.type), want, `${e.what}: by its URN`);
        if (e.type === 'schemaField') {
          const fieldPath = e.urn.slice(SCHEMA_FIELD.length, -1);
          assert.deepEqual(await find([{ field: 'fieldPath', values: [fieldPath] }], e.type), want, `${e.what}: by its field path`);
        }
        // Read back whole through the entity API.
        const got = (await readValues(s, e.urn, e.type)) as { values: { string?: string }[] }[];
        assert.ok(got.some((p) => p.values.some((x) => x.string === v.text)), `${e.what}: read back`);
      }
      assert.equal((await delivery()).failingEntities, 0);
    });

    test('a time series entry with a 40 KB message id is stored and read back, shipped to OpenSearch whole', async () => {
      const urn = await createDataset(s, 'series_long_id');
      const messageId = ascii(40 * 1024);
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: 1_000, messageId } }) }), 200);
      const later = await createDataset(s, 'series_later');
      await text(await s.request(`/openapi/v3/entity/dataset/${enc(later)}/datasetProfile?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { timestampMillis: 2_000, messageId: 'short' } }) }), 200);
      const entries = async (of: string) =>
        (JSON.parse(await text(await s.request(`/openapi/v2/timeseries/dataset/datasetProfile?urn=${encodeURIComponent(of)}`), 200)) as { results: { messageId?: string }[] }).results;
      if (backend.name === 'opensearch') {
        // Shipped: the outbox of entries empties (an entry OpenSearch refused would leave it, and reads, for good).
        await pollUntil('the entries shipped', async () => (await sql<{ n: number }>(s.databaseUrl, 'SELECT count(*)::int AS n FROM timeseries_entries'))[0]!.n, (n) => n === 0);
      }
      assert.deepEqual((await entries(urn)).map((e) => e.messageId), [messageId]);
      assert.deepEqual((await entries(later)).map((e) => e.messageId), ['short']);
    });

    test('an entity the backend refuses holds back no other: listed with its URN, error and age, counted, in /ready; retried, kept across a restart, delivered once mended', async () => {
      const chart = (id: string) => `urn:li:chart:(looker,${id})`;
      const poison = chart('poisoned');
      // A refusal of the backend's own, for this entity's document alone: Postgres, a constraint on the
      // value rows that its key field breaks; OpenSearch, an index whose mapping reads chart ids as
      // numbers (made before svc made its own), which refuses a chart id that is not one.
      const client = backend.name === 'opensearch' ? new Client({ node: opensearchUrl() }) : undefined;
      try {
        if (client) {
          const index = `${prefix}_chartindex_v2_1`;
          await client.indices.create({
            index,
            body: {
              settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '500ms' },
              mappings: {
                dynamic: false,
                properties: { urn: { type: 'keyword' }, removed: { type: 'boolean' }, dashboardTool: { type: 'keyword' }, chartId: { type: 'long' }, svcLongValues: { type: 'keyword' } },
              } as never,
            },
          });
          await client.indices.putAlias({ index, name: `${prefix}_chartindex_v2` });
        } else {
          await sql(s.databaseUrl, "ALTER TABLE search_values ADD CONSTRAINT poisoned_chart CHECK (str_value <> 'poisoned') NOT VALID");
        }
        const byId = (id: string) => find([{ field: 'urn', values: [chart(id)] }], 'chart');
        // The refused entity first, then others, some in the same request (one step: the batch is halved
        // until the refused one stands alone).
        await createEntity(s, 'chart', poison);
        const batch = ['1001', '1002', 'poisoned', '1003', '1004', '1005'].map((id) => ({ urn: chart(id), status: { value: { removed: false } } }));
        await text(await s.request('/openapi/v3/entity/chart?async=false', { method: 'POST', body: JSON.stringify(batch) }), 200);
        for (const id of ['1001', '1002', '1003', '1004', '1005']) {
          assert.deepEqual(await pollUntil(`chart ${id} searchable`, () => byId(id), (got) => got.length === 1), [chart(id)]);
        }
        const listed = await pollUntil(
          'the refused entity listed',
          delivery,
          (d) => d.failing.some((f) => f.urn === poison),
        );
        assert.equal(listed.failingEntities, 1, JSON.stringify(listed.failing));
        const failure = listed.failing[0]!;
        assert.equal(failure.urn, poison);
        assert.match(failure.error, backend.name === 'opensearch' ? /mapper_parsing_exception|failed to parse/ : /poisoned_chart/);
        assert.ok(failure.attempts >= 1 && failure.ageSeconds >= 0, JSON.stringify(failure));
        assert.ok(Date.parse(failure.nextAttemptAt) > Date.parse(failure.lastAttemptAt), JSON.stringify(failure));
        assert.ok(listed.lagSeconds >= failure.ageSeconds - 1, JSON.stringify(listed));
        assert.deepEqual(await byId('poisoned'), []);
        // Counted, and /ready says search lags (and stays in service).
        assert.equal(await metric('svc_search_failing_entities'), 1);
        assert.ok((await metric('svc_search_lag_seconds')) > 0);
        assert.ok((await metric('svc_search_entity_failures_total')) >= 1);
        const r = await ready();
        assert.equal(r.status, 200);
        assert.equal(r.body.search, 'DEGRADED');
        assert.equal(r.body.searchDelivery.failingEntities, 1);
        assert.ok(r.body.searchDelivery.lagSeconds > 0, JSON.stringify(r.body));
        // Tried again by itself, with a growing pause, while writes go on.
        const retried = await pollUntil('a second try', delivery, (d) => (d.failing[0]?.attempts ?? 0) >= 2);
        const again = retried.failing[0]!;
        assert.ok(Date.parse(again.nextAttemptAt) - Date.parse(again.lastAttemptAt) >= 1_500, JSON.stringify(again));
        await createEntity(s, 'chart', chart('1006'));
        await pollUntil('a chart written meanwhile searchable', () => byId('1006'), (got) => got.length === 1);
        // The record is durable: a server started again on the database still has it.
        await s.svc.close();
        others.push(s);
        s = await startTestServer({ ...env, DATABASE_URL: s.databaseUrl });
        assert.deepEqual((await delivery()).failing.map((f) => f.urn), [poison]);
        // Mended: Postgres, the constraint goes and the next try delivers it; OpenSearch, the entity goes
        // (its id cannot be a number) and its removal is delivered.
        if (client) await text(await s.request(`/openapi/v3/entity/chart/${enc(poison)}`, { method: 'DELETE' }), 200);
        else await sql(s.databaseUrl, 'ALTER TABLE search_values DROP CONSTRAINT poisoned_chart');
        await pollUntil('the mended entity delivered', delivery, (d) => d.failingEntities === 0, 60_000);
        if (!client) assert.deepEqual(await byId('poisoned'), [poison]);
        await pollUntil('/ready says search is up again', ready, (x) => x.body.search === 'UP');
        assert.equal(await metric('svc_search_failing_entities'), 0);
      } finally {
        await client?.close();
      }
    });
  });
}
