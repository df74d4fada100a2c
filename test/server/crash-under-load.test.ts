/**
 * Crash safety under mixed load: several clients write at once (aspect upserts and deletes,
 * structured-property values set, patched and removed, and two-entity batches) while the server is
 * killed with SIGKILL at random moments and started again. Every write answered 2xx must be there in the
 * end; a write whose answer was lost to the kill must be there wholly or not at all (the client reads
 * the entity back after the restart and finds either the state before or the state after); a batch is
 * never half applied.
 *
 * Seeded: the seed is printed, `SVC_RELIABILITY_SEED=<seed>` replays the same choices (the kill moments
 * fall where the timing puts them). `SVC_RELIABILITY_LONG=1` runs the long version (8 clients, 10 kills).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../harness/component.ts';
import { datasetUrn, definitionOf, propertyUrn } from '../support/structuredProperties.ts';
import { createTestDatabase, enc } from '../support/testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'crash-load-token';
const LONG = process.env.SVC_RELIABILITY_LONG === '1';
const CLIENTS = LONG ? 8 : 4;
const KILLS = LONG ? 10 : 3;
const DATASETS = 4;
const SEED = Number(process.env.SVC_RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PROP_A = propertyUrn('crashload.a');
const PROP_B = propertyUrn('crashload.b');

/** mulberry32: a small seeded generator, so a run's choices can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let databaseUrl: string;
let port: number;
let server: ChildProcess | undefined;
/** Resolves once the server (re)started answers /ready; replaced at each kill. */
let up: Promise<void> = Promise.resolve();

async function startServer(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'server/src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), SVC_ADMIN_TOKEN: TOKEN, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  server = child;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ready`)).ok) return;
    } catch {
      // starting
    }
    if (i > 600) throw new Error('server did not become ready');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function kill(): Promise<void> {
  const child = server;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

function call(path: string, init: RequestInit & { contentType?: string } = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': init.contentType ?? 'application/json', accept: 'application/json' },
  });
}

/** What a dataset holds, as the model and the reads see it. */
interface State {
  description: string | null;
  typeName: string | null;
  values: Record<string, string>;
}

const empty = (): State => ({ description: null, typeName: null, values: {} });

/** The dataset as stored now (v2 single-aspect reads answer `{"value": …}`). */
async function read(urn: string): Promise<State> {
  const state = empty();
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

const canonical = (s: State) => JSON.stringify([s.description, s.typeName, Object.entries(s.values).sort()]);
const same = (a: State, b: State) => canonical(a) === canonical(b);

/** A JSON Patch of an entity's structured properties. */
function patchProperties(urn: string, patch: unknown[]): Promise<Response> {
  return call(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties`, {
    method: 'PATCH',
    contentType: 'application/json-patch+json',
    body: JSON.stringify({ patch, arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
  });
}

/** One write: the request, and the states it moves its datasets to. */
interface Write {
  what: string;
  send(): Promise<Response>;
  after: Map<string, State>;
}

/** Picks a write for client `c` (owning `own` and the pair `pair`) from the model. */
function pick(random: () => number, model: Map<string, State>, own: string[], pair: [string, string], tok: string): Write {
  const urn = own[Math.floor(random() * own.length)]!;
  const now = model.get(urn)!;
  const next = (s: Partial<State>) => new Map([[urn, { ...now, values: { ...now.values }, ...s }]]);
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
        call(`/openapi/v3/entity/dataset/${enc(urn)}/structuredProperties?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: { properties: [{ propertyUrn: PROP_A, values: [{ string: tok }] }] } }) }),
      after: next({ values: { [PROP_A]: tok } }),
    };
  }
  if (r < 0.75) {
    const prop = random() < 0.5 ? PROP_A : PROP_B;
    return {
      what: `patch ${prop} of ${urn}`,
      send: () => patchProperties(urn, [{ op: 'add', path: `/properties/${prop}`, value: { propertyUrn: prop, values: [{ string: tok }] } }]),
      after: next({ values: { ...now.values, [prop]: tok } }),
    };
  }
  if (r < 0.85 && Object.keys(now.values).length > 0) {
    const prop = Object.keys(now.values).sort()[0]!;
    const values = { ...now.values };
    delete values[prop];
    return {
      what: `remove ${prop} of ${urn}`,
      send: () => patchProperties(urn, [{ op: 'remove', path: `/properties/${prop}` }]),
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

before(async () => {
  databaseUrl = await createTestDatabase();
  port = await freePort();
  up = startServer();
  await up;
  for (const urn of [PROP_A, PROP_B]) {
    const qualifiedName = urn.slice('urn:li:structuredProperty:'.length);
    const res = await call(`/openapi/v3/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, { method: 'POST', body: JSON.stringify({ value: definitionOf(qualifiedName) }) });
    assert.equal(res.status, 200, await res.text());
  }
});

after(async () => {
  await kill();
});

test(`acknowledged writes survive ${KILLS} SIGKILLs under ${CLIENTS} writing clients; lost answers are all or nothing (seed ${SEED})`, { timeout: LONG ? 600_000 : 120_000 }, async () => {
  process.stdout.write(`# crash-under-load seed ${SEED} (replay: SVC_RELIABILITY_SEED=${SEED})\n`);
  const random = rng(SEED);
  const model = new Map<string, State>();
  const owned: string[][] = [];
  const pairs: [string, string][] = [];
  for (let c = 0; c < CLIENTS; c++) {
    owned.push(Array.from({ length: DATASETS }, (_, k) => datasetUrn(`crashload.c${c}.d${k}`)));
    pairs.push([datasetUrn(`crashload.c${c}.pair_a`), datasetUrn(`crashload.c${c}.pair_b`)]);
    for (const urn of [...owned[c]!, ...pairs[c]!]) {
      // Structured properties are set only on entities that exist.
      const res = await call(`/openapi/v3/entity/dataset/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' });
      assert.equal(res.status, 200, await res.text());
      model.set(urn, empty());
    }
  }
  let stop = false;
  const counts = { acknowledged: 0, lost: 0, appliedAfterLoss: 0 };

  const client = async (c: number) => {
    const mine = rng(SEED + c + 1);
    for (let n = 0; !stop; n++) {
      const write = pick(mine, model, owned[c]!, pairs[c]!, `c${c}n${n}`);
      await up;
      let res: Response | undefined;
      try {
        res = await write.send();
      } catch {
        res = undefined; // the connection died with the server
      }
      if (res && res.status < 500) {
        const body = await res.text().catch(() => undefined);
        if (body === undefined) res = undefined;
        else {
          assert.ok(res.status >= 200 && res.status < 300, `${write.what}: ${res.status} ${body}`);
          for (const [urn, s] of write.after) model.set(urn, s);
          counts.acknowledged++;
          continue;
        }
      }
      // No answer: once the server is back, the datasets hold the state before or after, wholly.
      counts.lost++;
      await new Promise((r) => setTimeout(r, 20));
      await up;
      let applied: boolean | undefined;
      for (const [urn, s] of write.after) {
        const now = await read(urn);
        const was = model.get(urn)!;
        const isAfter = same(now, s);
        assert.ok(isAfter || same(now, was), `${write.what} (answer lost): ${urn} holds ${JSON.stringify(now)}, neither before ${JSON.stringify(was)} nor after ${JSON.stringify(s)}`);
        if (isAfter && !same(s, was)) {
          assert.notEqual(applied, false, `${write.what}: half applied`);
          applied = true;
        } else if (!isAfter) {
          assert.notEqual(applied, true, `${write.what}: half applied`);
          applied = false;
        }
        model.set(urn, now);
      }
      if (applied) counts.appliedAfterLoss++;
    }
  };

  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  const failed = Promise.race(clients.map((p) => p.then(() => new Promise<never>(() => undefined))));
  const chaos = (async () => {
    for (let k = 0; k < KILLS && !stop; k++) {
      await new Promise((r) => setTimeout(r, 800 + random() * 2500));
      let restarted!: () => void;
      up = new Promise<void>((r) => (restarted = r));
      await kill();
      await startServer();
      restarted();
    }
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
  })();
  try {
    await Promise.race([Promise.all([chaos, ...clients]), failed]);
  } finally {
    stop = true;
  }

  // In the end the model (what was acknowledged, and what the reads after each loss found) is what is stored.
  for (const [urn, expected] of model) assert.deepEqual(await read(urn), expected, urn);
  for (const [a, b] of pairs) {
    const [x, y] = [await read(a), await read(b)];
    assert.equal(x.description, x.typeName, `${a}: one batch wrote both aspects`);
    assert.deepEqual([y.description, y.typeName], [x.description, x.typeName], 'one batch wrote both entities');
  }
  process.stdout.write(`# crash-under-load: ${counts.acknowledged} writes acknowledged, ${counts.lost} answers lost to ${KILLS} kills (${counts.appliedAfterLoss} of those applied)\n`);
  assert.ok(counts.acknowledged > 50 * KILLS, `enough load: ${counts.acknowledged} acknowledged`);
  assert.ok(counts.lost > 0, 'some writes were in flight at a kill');
});
