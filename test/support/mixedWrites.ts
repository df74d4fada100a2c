/**
 * The mixed write load of the reliability tests (crash-under-load, postgres-outage, replicas,
 * faults-under-load): clients each own a
 * few datasets, pick writes from a model of what those hold (aspect upserts and deletes,
 * structured-property values set, patched and removed, two-entity batches), and check that a write whose
 * answer was lost or failed is found wholly applied or not at all. Every request goes through the test's
 * own `call` (its server, its token, its bounds).
 */
import assert from 'node:assert/strict';
import { pollUntil } from './poll.ts';
import { datasetUrn, definitionOf } from './structuredProperties.ts';
import { enc, sql } from './testServer.ts';

/** A request to the server under test, with its token and `content-type` (JSON unless `contentType`). */
export type Call = (path: string, init?: RequestInit & { contentType?: string }) => Promise<Response>;

/** mulberry32: a small seeded generator, so a run's choices can be replayed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a dataset holds, as the model and the reads see it. */
export interface DatasetState {
  description: string | null;
  typeName: string | null;
  values: Record<string, string>;
}

export const emptyState = (): DatasetState => ({ description: null, typeName: null, values: {} });

/** The dataset as stored now (v2 single-aspect reads answer `{"value": …}`). */
export async function readState(call: Call, urn: string): Promise<DatasetState> {
  const state = emptyState();
  const props = await call(`/openapi/v2/entity/dataset/${enc(urn)}/datasetProperties`);
  if (props.status === 200) state.description = ((await props.json()) as { value: { description: string } }).value.description;
  else assert.equal(props.status, 404, await props.text());
  const sub = await call(`/openapi/v2/entity/dataset/${enc(urn)}/subTypes`);
  if (sub.status === 200) state.typeName = ((await sub.json()) as { value: { typeNames: string[] } }).value.typeNames[0] ?? null;
  else assert.equal(sub.status, 404, await sub.text());
  const sp = await call(`/openapi/v2/entity/dataset/${enc(urn)}/structuredProperties`);
  if (sp.status === 200) {
    const body = (await sp.json()) as { value: { properties: { propertyUrn: string; values: { string: string }[] }[] } };
    for (const p of body.value.properties) state.values[p.propertyUrn] = p.values[0]!.string;
  } else assert.equal(sp.status, 404, await sp.text());
  return state;
}

const canonical = (s: DatasetState) => JSON.stringify([s.description, s.typeName, Object.entries(s.values).sort()]);
const same = (a: DatasetState, b: DatasetState) => canonical(a) === canonical(b);

/** One write: the request, and the states it moves its datasets to. */
export interface Write {
  what: string;
  send(): Promise<Response>;
  after: Map<string, DatasetState>;
}

/** The datasets of a load: each client's own, and its pair for two-entity batches; all empty at first. */
export interface Workload {
  /** The two structured properties values are set of (SINGLE strings on datasets). */
  properties: [string, string];
  model: Map<string, DatasetState>;
  owned: string[][];
  pairs: [string, string][];
}

/**
 * Defines the two properties and creates `clients` × (`datasets` + a pair) datasets named after
 * `prefix` (structured properties are set only on entities that exist).
 */
export async function prepareWorkload(call: Call, prefix: string, clients: number, datasets = 4): Promise<Workload> {
  const properties = [`urn:li:structuredProperty:${prefix}.a`, `urn:li:structuredProperty:${prefix}.b`] as [string, string];
  for (const urn of properties) {
    const qualifiedName = urn.slice('urn:li:structuredProperty:'.length);
    const res = await call(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: definitionOf(qualifiedName) }) });
    assert.equal(res.status, 200, await res.text());
  }
  const model = new Map<string, DatasetState>();
  const owned: string[][] = [];
  const pairs: [string, string][] = [];
  for (let c = 0; c < clients; c++) {
    owned.push(Array.from({ length: datasets }, (_, k) => datasetUrn(`${prefix}.c${c}.d${k}`)));
    pairs.push([datasetUrn(`${prefix}.c${c}.pair_a`), datasetUrn(`${prefix}.c${c}.pair_b`)]);
    for (const urn of [...owned[c]!, ...pairs[c]!]) {
      const res = await call(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' });
      assert.equal(res.status, 200, await res.text());
      model.set(urn, emptyState());
    }
  }
  return { properties, model, owned, pairs };
}

/** A JSON Patch of an entity's structured properties. */
function patchProperties(call: Call, urn: string, patch: unknown[]): Promise<Response> {
  return call(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties`, {
    method: 'PATCH',
    contentType: 'application/json-patch+json',
    body: JSON.stringify({ patch, arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
  });
}

/** Picks the next write of client `c` from the model; `tok` is the value it writes (unique per write). */
export function pickWrite(call: Call, load: Workload, c: number, random: () => number, tok: string): Write {
  const { model } = load;
  const [propA, propB] = load.properties;
  const own = load.owned[c]!;
  const pair = load.pairs[c]!;
  const urn = own[Math.floor(random() * own.length)]!;
  const now = model.get(urn)!;
  const next = (s: Partial<DatasetState>) => new Map([[urn, { ...now, values: { ...now.values }, ...s }]]);
  const r = random();
  if (r < 0.25) {
    return {
      what: `upsert datasetProperties of ${urn}`,
      send: () => call(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { description: tok } }) }),
      after: next({ description: tok }),
    };
  }
  if (r < 0.35 && now.description !== null) {
    return { what: `delete datasetProperties of ${urn}`, send: () => call(`/openapi/v3/entity/dataset/${enc(urn)}/datasetProperties`, { method: 'DELETE' }), after: next({ description: null }) };
  }
  if (r < 0.55) {
    return {
      what: `set structured properties of ${urn}`,
      send: () =>
        call(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: propA, values: [{ string: tok }] }] } }) }),
      after: next({ values: { [propA]: tok } }),
    };
  }
  if (r < 0.75) {
    const prop = random() < 0.5 ? propA : propB;
    return {
      what: `patch ${prop} of ${urn}`,
      send: () => patchProperties(call, urn, [{ op: 'add', path: `/properties/${prop}`, value: { propertyUrn: prop, values: [{ string: tok }] } }]),
      after: next({ values: { ...now.values, [prop]: tok } }),
    };
  }
  if (r < 0.85 && Object.keys(now.values).length > 0) {
    const prop = Object.keys(now.values).sort()[0]!;
    const values = { ...now.values };
    delete values[prop];
    return {
      what: `remove ${prop} of ${urn}`,
      send: () => patchProperties(call, urn, [{ op: 'remove', path: `/properties/${prop}` }]),
      after: next({ values }),
    };
  }
  // A batch of two aspects on each of two entities: all four or none.
  return {
    what: `batch on ${pair.join(' and ')}`,
    send: () =>
      call('/openapi/v3/entity/dataset?async=false', {
        method: 'POST',
        body: JSON.stringify(pair.map((u) => ({ urn: u, datasetProperties: { value: { description: tok } }, subTypes: { value: { typeNames: [tok] } } }))),
      }),
    after: new Map(pair.map((u) => [u, { ...model.get(u)!, values: { ...model.get(u)!.values }, description: tok, typeName: tok }])),
  };
}

/**
 * Sends one write. Answered 2xx: the model takes its result and it returns true. No answer (the server
 * died, or the connection did) or a 5xx: it returns false, and the caller settles it once the server
 * serves again ({@link settleUnacknowledged}). Any other answer fails: the load only sends valid writes.
 */
export async function sendWrite(load: Workload, write: Write): Promise<boolean> {
  let res: Response;
  let body: string;
  try {
    res = await write.send();
    body = await res.text();
  } catch {
    return false;
  }
  if (res.status >= 500) return false;
  assert.ok(res.status >= 200 && res.status < 300, `${write.what}: ${res.status} ${body}`);
  for (const [urn, s] of write.after) load.model.set(urn, s);
  return true;
}

/**
 * For a write not acknowledged (its answer lost, or a failure): reads its datasets back and asserts each
 * holds the state before or the state after, the same for all of them (never half applied). Takes what
 * was found into the model; returns whether the write was applied.
 */
export async function settleUnacknowledged(call: Call, load: Workload, write: Write): Promise<boolean> {
  let applied: boolean | undefined;
  for (const [urn, s] of write.after) {
    const now = await readState(call, urn);
    const was = load.model.get(urn)!;
    const isAfter = same(now, s);
    assert.ok(isAfter || same(now, was), `${write.what} (not acknowledged): ${urn} holds ${JSON.stringify(now)}, neither before ${JSON.stringify(was)} nor after ${JSON.stringify(s)}`);
    if (isAfter && !same(s, was)) {
      assert.notEqual(applied, false, `${write.what}: half applied`);
      applied = true;
    } else if (!isAfter) {
      assert.notEqual(applied, true, `${write.what}: half applied`);
      applied = false;
    }
    load.model.set(urn, now);
  }
  return applied === true;
}

/** Asserts that what is stored is the model (every acknowledged write, and what each settle found), and no batch is half there. */
export async function assertStoredAsModelled(call: Call, load: Workload): Promise<void> {
  for (const [urn, expected] of load.model) assert.deepEqual(await readState(call, urn), expected, urn);
  for (const [a, b] of load.pairs) {
    const [x, y] = [await readState(call, a), await readState(call, b)];
    assert.equal(x.description, x.typeName, `${a}: one batch wrote both aspects`);
    assert.deepEqual([y.description, y.typeName], [x.description, x.typeName], 'one batch wrote both entities');
  }
}

/**
 * Waits until the clients have had more than `writes` writes acknowledged since `counts.acknowledged`
 * read `since`: a fault loop calls it before each fault, so every fault meets a load however slow the
 * machine is (a fixed pause met 88 writes where 90 were asked on a busy one).
 */
export async function loadBeforeFault(counts: { acknowledged: number }, since: number, writes: number): Promise<void> {
  await pollUntil(`${writes} writes acknowledged before the fault`, async () => counts.acknowledged, (n) => n > since + writes, 60_000);
}

/**
 * Runs writing clients beside a fault loop, which ends by stopping them (`stop`), until all are done: a
 * client that fails ends the run at once with its error (the others are stopped through `stop`).
 */
export async function runUnderFaults(clients: Promise<void>[], faults: Promise<void>, stop: () => void): Promise<void> {
  const failed = Promise.race(clients.map((p) => p.then(() => new Promise<never>(() => undefined))));
  try {
    await Promise.race([Promise.all([faults, ...clients]), failed]);
  } finally {
    stop();
  }
}

/**
 * Once the search outbox of the database at `databaseUrl` is delivered, asserts that a search for each
 * stored value of the load (`structuredProperties.<name>:<value>`) finds its dataset alone; delivered is
 * not yet searchable on OpenSearch (its refresh interval), so each search is polled. Returns how many values it checked.
 */
export async function assertSearchable(call: Call, load: Workload, databaseUrl: string): Promise<number> {
  await pollUntil('the outbox delivered', () => sql<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM search_outbox').then((r) => r[0]!.n), (n) => n === 0, 60_000);
  let checked = 0;
  for (const [urn, state] of load.model) {
    for (const [property, value] of Object.entries(state.values)) {
      const field = `structuredProperties.${property.slice('urn:li:structuredProperty:'.length).replace(/\./g, '_')}`;
      const search = async () => {
        const res = await call(`/openapi/v3/entity/dataset?query=${encodeURIComponent(`${field}:${value}`)}&count=10`);
        assert.equal(res.status, 200, await res.clone().text());
        return ((await res.json()) as { entities: { urn: string }[] }).entities.map((e) => e.urn);
      };
      await pollUntil(`search for ${field}:${value} finds ${urn}`, search, (found) => found.length === 1 && found[0] === urn, 10_000);
      checked++;
    }
  }
  return checked;
}
