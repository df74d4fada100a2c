/**
 * The timeline route, `GET /openapi/v2/timeline/v1/{urn}` (what `datahub timeline` calls), at the
 * HTTP level: the changes of each category computed from consecutive versions of an entity's aspects,
 * oldest first, with their computed versions, stamps and raw diffs; the window; an entity that does
 * not exist (no changes); and refusals (a malformed URN, an unknown or missing category, bad times,
 * an unknown parameter, no token), which change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fingerprint } from '../support/fingerprint.ts';
import { createProperty, datasetUrn, propertyUrn } from '../support/structuredProperties.ts';
import { enc, startTestServer, text, type TestServer } from '../support/testServer.ts';

let s: TestServer;
const DATASET = datasetUrn('timeline.orders');
const TIER = propertyUrn('timeline.tier');
let started = 0;

interface Transaction {
  timestamp: number;
  actor: string;
  semVer: string;
  semVerChange: string;
  versionStamp: string;
  changeEvents: { entityUrn: string; category: string; operation: string; modifier?: string; parameters?: Record<string, unknown>; semVerChange: string; description: string; auditStamp: { time: number; actor: string } }[];
  rawDiff?: { op: string; path: string; value?: unknown }[];
}

const write = async (aspect: string, value: unknown) =>
  text(await s.request(`/openapi/v3/entity/dataset/${enc(DATASET)}/${aspect}?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value }) }), 200);
const timeline = async (query: string, urn = DATASET): Promise<Transaction[]> => JSON.parse(await text(await s.request(`/openapi/v2/timeline/v1/${enc(urn)}?${query}`), 200));
/** Each event as [category, operation, modifier] in the order answered. */
const flat = (txs: Transaction[]) => txs.flatMap((t) => t.changeEvents.map((e) => [e.category, e.operation, e.modifier ?? null]));

before(async () => {
  s = await startTestServer();
  await createProperty(s, 'timeline.tier');
  started = Date.now();
  await write('status', { removed: false });
  await write('globalTags', { tags: [{ tag: 'urn:li:tag:pii' }] });
  await write('globalTags', { tags: [{ tag: 'urn:li:tag:pii' }, { tag: 'urn:li:tag:gold' }] });
  await write('ownership', { owners: [{ owner: 'urn:li:corpuser:alice', type: 'DATAOWNER' }] });
  await write('editableDatasetProperties', { description: 'Orders, one row each' });
  await write('globalTags', { tags: [{ tag: 'urn:li:tag:gold' }] });
  await write('structuredProperties', { properties: [{ propertyUrn: TIER, values: [{ string: 'a' }] }] });
  await write('status', { removed: true });
});
after(async () => {
  await s.close();
});

test('the changes of the categories asked for, oldest first, each from one version of an aspect to the next', async () => {
  const txs = await timeline('categories=TAG,OWNER,DOCUMENTATION,LIFECYCLE,STRUCTURED_PROPERTY');
  assert.deepEqual(flat(txs), [
    ['LIFECYCLE', 'CREATE', null],
    ['TAG', 'ADD', 'urn:li:tag:pii'],
    ['TAG', 'ADD', 'urn:li:tag:gold'],
    ['OWNERSHIP', 'ADD', 'urn:li:corpuser:alice'],
    ['DOCUMENTATION', 'ADD', null],
    ['TAG', 'REMOVE', 'urn:li:tag:pii'],
    ['STRUCTURED_PROPERTY', 'ADD', TIER],
    ['LIFECYCLE', 'SOFT_DELETE', null],
  ]);
  for (let i = 1; i < txs.length; i++) assert.ok(txs[i]!.timestamp > txs[i - 1]!.timestamp, 'one transaction per moment, oldest first');
  assert.ok(txs[0]!.timestamp >= started - 1_000 && txs.at(-1)!.timestamp <= Date.now());
  // The first is 0.0.0; each MINOR change raises the minor version, the soft delete (MAJOR) the major one.
  assert.equal(txs[0]!.semVer, '0.0.0-computed');
  assert.deepEqual(txs.map((t) => t.semVer).slice(1), ['0.1.0-computed', '0.2.0-computed', '0.3.0-computed', '0.4.0-computed', '0.5.0-computed', '0.6.0-computed', '1.0.0-computed']);
  assert.equal(txs.at(-1)!.semVerChange, 'MAJOR');
  const tagAdded = txs.find((t) => t.changeEvents.some((e) => e.modifier === 'urn:li:tag:gold'))!;
  const event = tagAdded.changeEvents[0]!;
  assert.deepEqual({ ...event, description: undefined }, {
    entityUrn: DATASET,
    category: 'TAG',
    operation: 'ADD',
    modifier: 'urn:li:tag:gold',
    parameters: { tagUrn: 'urn:li:tag:gold' },
    auditStamp: { time: tagAdded.timestamp, actor: tagAdded.actor },
    semVerChange: 'MINOR',
    description: undefined,
  });
  assert.match(event.description, /urn:li:tag:gold/);
  assert.match(tagAdded.actor, /^urn:li:corpuser:/);
  // The version of each aspect read, then: the second version of globalTags, the first of the others written before it.
  assert.equal(tagAdded.versionStamp, 'datasetKey:1;globalTags:2;status:1');
  assert.equal(tagAdded.rawDiff, undefined);
});

test('raw=true adds each transaction\'s JSON Patch, under the aspect\'s name', async () => {
  const txs = await timeline('categories=TAG&raw=true');
  assert.deepEqual(await timeline('categories=TAG&raw=True'), txs, 'as DataHub\'s CLI sends it');
  assert.deepEqual(txs.map((t) => t.rawDiff), [
    [{ op: 'replace', path: '/globalTags', value: { tags: [{ tag: 'urn:li:tag:pii' }] } }],
    [{ op: 'add', path: '/globalTags/tags/1', value: { tag: 'urn:li:tag:gold' } }],
    [{ op: 'remove', path: '/globalTags/tags/1' }, { op: 'replace', path: '/globalTags/tags/0/tag', value: 'urn:li:tag:gold' }],
  ]);
});

test('the window: startTime and endTime bound the changes; the version in force before it is what the first change is compared with', async () => {
  const all = await timeline('categories=TAG');
  assert.equal(all.length, 3);
  const last = all.at(-1)!;
  assert.deepEqual(flat(await timeline(`categories=TAG&startTime=${last.timestamp}`)), [['TAG', 'REMOVE', 'urn:li:tag:pii']]);
  assert.deepEqual(flat(await timeline(`categories=TAG&endTime=${all[0]!.timestamp}`)), [['TAG', 'ADD', 'urn:li:tag:pii']]);
  assert.deepEqual(await timeline(`categories=TAG&startTime=${Date.now() + 60_000}&endTime=${Date.now() + 120_000}`), []);
  // Without a start, a week back from the end; an end a month ago sees nothing.
  assert.deepEqual(await timeline(`categories=TAG&endTime=${Date.now() - 30 * 86_400_000}`), []);
  // Times beyond what a date holds are read as its limits.
  assert.equal((await timeline(`categories=TAG&startTime=-9007199254740991&endTime=9007199254740991`)).length, 3);
});

test('categories: any case, OWNER is OWNERSHIP, one with no changes answers none; an entity that does not exist has no changes', async () => {
  assert.deepEqual(flat(await timeline('categories=owner')), [['OWNERSHIP', 'ADD', 'urn:li:corpuser:alice']]);
  assert.deepEqual(flat(await timeline('categories=ownership&categories=Glossary_Term')), [['OWNERSHIP', 'ADD', 'urn:li:corpuser:alice']]);
  assert.deepEqual(await timeline('categories=TECHNICAL_SCHEMA,DOMAIN'), []);
  assert.deepEqual(await timeline('categories=TAG', datasetUrn('timeline.never')), []);
  assert.deepEqual(await timeline('categories=TAG', 'urn:li:tag:never'), []);
});

test('refusals: a malformed URN, an unknown or missing category, bad times, an unknown parameter, no token; nothing changes', async () => {
  const before = await fingerprint(s.databaseUrl);
  const refused = async (path: string, status: number, token?: null) => {
    const res = await s.request(path, token === null ? { token: null } : {});
    const body = await res.text();
    assert.equal(res.status, status, `${path}: ${body}`);
    return JSON.parse(body) as { error: string; message?: string };
  };
  const at = `/openapi/v2/timeline/v1/${enc(DATASET)}`;
  assert.deepEqual(await refused('/openapi/v2/timeline/v1/not-a-urn?categories=TAG', 400), { error: 'Invalid urn!: not-a-urn' });
  assert.deepEqual(await refused(`/openapi/v2/timeline/v1/${enc('urn:li:noSuchType:x')}?categories=TAG`, 400), { error: 'Invalid urn!: urn:li:noSuchType:x' });
  const unknown = await refused(`${at}?categories=TAG,RUN`, 400);
  assert.equal(unknown.error, 'Validation Error');
  assert.match(unknown.message!, /unknown category "RUN"; the categories are TAG, GLOSSARY_TERM, OWNERSHIP, DOCUMENTATION, TECHNICAL_SCHEMA, DOMAIN, STRUCTURED_PROPERTY/);
  assert.match((await refused(at, 400)).message!, /categories is required/);
  assert.match((await refused(`${at}?categories=`, 400)).message!, /categories is required/);
  assert.match((await refused(`${at}?categories=TAG&startTime=soon`, 400)).message!, /startTime: expected an integer/);
  assert.match((await refused(`${at}?categories=TAG&startTime=20&endTime=10`, 400)).message!, /startTime 20 is after endTime 10/);
  assert.match((await refused(`${at}?categories=TAG&raw=yes`, 400)).message!, /raw: expected one of true, false, True, False/);
  assert.match((await refused(`${at}?categories=TAG&limit=3`, 400)).message!, /unknown query parameter "limit"/);
  await refused(`${at}?categories=TAG`, 401, null);
  assert.equal(await fingerprint(s.databaseUrl), before);
});

test('includeVersionSet (what the 1.x CLI sends with --include-version-set) is taken and changes nothing', async () => {
  assert.deepEqual(await timeline('categories=TAG&includeVersionSet=true'), await timeline('categories=TAG'));
});
