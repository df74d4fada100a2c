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
import { assertStoredAsModelled, loadBeforeFault, pickWrite, prepareWorkload, rng, runUnderFaults, sendWrite, settleUnacknowledged } from '../support/mixedWrites.ts';
import { createTestDatabase } from '../support/testServer.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'crash-load-token';
const LONG = process.env.SVC_RELIABILITY_LONG === '1';
const CLIENTS = LONG ? 8 : 4;
const KILLS = LONG ? 10 : 3;
/**
 * Kills beyond KILLS while none has yet cut a write off: a kill can land when every answer is already
 * on its way (a loaded machine, the clients slow to read them), and the test is about writes cut off.
 */
const EXTRA_KILLS = 10;
const SEED = Number(process.env.SVC_RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));

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

before(async () => {
  databaseUrl = await createTestDatabase();
  port = await freePort();
  up = startServer();
  await up;
});

after(async () => {
  await kill();
});

test(`acknowledged writes survive ${KILLS} SIGKILLs under ${CLIENTS} writing clients; lost answers are all or nothing (seed ${SEED})`, { timeout: LONG ? 600_000 : 120_000 }, async () => {
  process.stdout.write(`# crash-under-load seed ${SEED} (replay: SVC_RELIABILITY_SEED=${SEED})\n`);
  const random = rng(SEED);
  const load = await prepareWorkload(call, 'crashload', CLIENTS);
  let stop = false;
  const counts = { acknowledged: 0, lost: 0, appliedAfterLoss: 0 };

  const client = async (c: number) => {
    const mine = rng(SEED + c + 1);
    for (let n = 0; !stop; n++) {
      const write = pickWrite(call, load, c, mine, `c${c}n${n}`);
      await up;
      if (await sendWrite(load, write)) {
        counts.acknowledged++;
        continue;
      }
      // No answer: once the server is back, the datasets hold the state before or after, wholly.
      counts.lost++;
      await new Promise((r) => setTimeout(r, 20));
      await up;
      if (await settleUnacknowledged(call, load, write)) counts.appliedAfterLoss++;
    }
  };

  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  let kills = 0;
  const chaos = (async () => {
    for (; (kills < KILLS || (counts.lost === 0 && kills < KILLS + EXTRA_KILLS)) && !stop; kills++) {
      const before = counts.acknowledged;
      await new Promise((r) => setTimeout(r, 800 + random() * 2500));
      await loadBeforeFault(counts, before, 50);
      let restarted!: () => void;
      up = new Promise<void>((r) => (restarted = r));
      await kill();
      await startServer();
      restarted();
    }
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
  })();
  await runUnderFaults(clients, chaos, () => (stop = true));

  // In the end the model (what was acknowledged, and what the reads after each loss found) is what is stored.
  await assertStoredAsModelled(call, load);
  process.stdout.write(`# crash-under-load: ${counts.acknowledged} writes acknowledged, ${counts.lost} answers lost to ${kills} kills (${counts.appliedAfterLoss} of those applied)\n`);
  assert.ok(counts.acknowledged > 50 * KILLS, `enough load: ${counts.acknowledged} acknowledged`);
  assert.ok(counts.lost > 0, `some writes were in flight at one of ${kills} kills`);
});
