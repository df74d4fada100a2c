/**
 * Leader election of operator replicas on a real kube-apiserver (`KUBECONFIG`): one of two replicas
 * leads, a released Lease is taken over at once, a crashed leader's Lease only once it expired, and
 * at no sampled moment do two replicas both lead. Each case uses a Lease of its own.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { CoordinationV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { LeaderElector, type LeaderElectionOptions } from '../../operator/src/runtime/leaderElection.ts';
import { OperatorMetrics } from '../../operator/src/runtime/metrics.ts';
import { createLogger } from '../../server/src/shared/log.ts';
import { kubeClients } from '../support/kubeClients.ts';
import { kubeProxy } from '../support/kubeProxy.ts';

const { kc } = kubeClients();
const leases = kc.makeApiClient(CoordinationV1Api);
const namespace = 'default';
const log = createLogger(process.env.SVC_TEST_LOG_LEVEL ?? 'silent');
const runId = randomUUID().slice(0, 8);

/** Short timings, so an expired Lease is taken over within seconds. */
const FAST = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

/** One operator replica: its elector and what its callbacks saw. */
interface Replica {
  identity: string;
  elector: LeaderElector;
  metrics: OperatorMetrics;
  started: number;
  stopped: number;
  /** `run()`'s promise, and whether it has resolved. */
  run: Promise<void>;
  ran: boolean;
}

const replicas: Replica[] = [];
const leaseNames: string[] = [];

function newLeaseName(): string {
  const name = `leader-election-${runId}-${leaseNames.length + 1}`;
  leaseNames.push(name);
  return name;
}

function startReplica(lease: string, label: string, timing: Partial<LeaderElectionOptions>, config: KubeConfig = kc): Replica {
  const metrics = new OperatorMetrics();
  const replica = { identity: `${label}_${randomUUID()}`, metrics, started: 0, stopped: 0, ran: false } as Replica;
  replica.elector = new LeaderElector({
    kc: config,
    namespace,
    name: lease,
    identity: replica.identity,
    ...timing,
    log,
    metrics,
    onStartedLeading: () => replica.started++,
    onStoppedLeading: () => replica.stopped++,
  });
  replica.run = replica.elector.run().then(() => {
    replica.ran = true;
  });
  replicas.push(replica);
  return replica;
}

/** Checks every 5 ms that the replicas never both lead; `stop()` returns how many samples were taken. */
function neverBothLead(a: Replica, b: Replica): { stop(): number } {
  let samples = 0;
  let both = 0;
  const timer = setInterval(() => {
    samples++;
    if (a.elector.isLeader() && b.elector.isLeader()) both++;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      assert.equal(both, 0, `both replicas led at ${both} of ${samples} sampled moments`);
      return samples;
    },
  };
}

/** Waits until `condition` holds, checking every 10 ms; fails after `timeoutMs`. */
async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** The replica that leads once one does; fails if both do. */
async function leaderOf(a: Replica, b: Replica): Promise<{ leader: Replica; follower: Replica }> {
  await until('one replica leads', () => a.elector.isLeader() || b.elector.isLeader(), 15_000);
  assert.ok(!(a.elector.isLeader() && b.elector.isLeader()), 'both replicas lead');
  return a.elector.isLeader() ? { leader: a, follower: b } : { leader: b, follower: a };
}

function readLease(name: string): Promise<V1Lease> {
  return leases.readNamespacedLease({ name, namespace });
}

function leaderStatus(replica: Replica, lease: string): Promise<string | undefined> {
  return replica.metrics.expose().then(({ body }) => body.match(new RegExp(`^leader_election_master_status\\{name="${lease}"\\} (\\d+)$`, 'm'))?.[1]);
}

describe('leader election on a Lease', () => {
  after(async () => {
    await Promise.all(replicas.map((r) => r.elector.stop({ release: false })));
    await Promise.all(leaseNames.map((name) => leases.deleteNamespacedLease({ name, namespace }).catch(() => undefined)));
  });

  it('lets one of two replicas lead and names it in the Lease', async () => {
    const lease = newLeaseName();
    const a = startReplica(lease, 'a', FAST);
    const b = startReplica(lease, 'b', FAST);
    const check = neverBothLead(a, b);
    const { leader, follower } = await leaderOf(a, b);

    await sleep(1000);
    assert.ok(leader.elector.isLeader(), 'the leader keeps its lease by renewing it');
    assert.ok(!follower.elector.isLeader());
    assert.equal(leader.started, 1);
    assert.equal(follower.started, 0);
    assert.equal(await leaderStatus(leader, lease), '1');
    assert.equal(await leaderStatus(follower, lease), '0');

    const spec = (await readLease(lease)).spec;
    assert.equal(spec?.holderIdentity, leader.identity);
    assert.equal(spec?.leaseDurationSeconds, 2);
    assert.equal(spec?.leaseTransitions, 0);
    assert.match(String(spec?.acquireTime), /\.\d{6}Z$/, 'acquireTime is a MicroTime');
    assert.ok(new Date(String(spec?.renewTime)) > new Date(String(spec?.acquireTime)), 'the leader renewed the lease');

    await Promise.all([a.elector.stop(), b.elector.stop()]);
    check.stop();
    await until('run() resolves once stopped', () => a.ran && b.ran, 2000);
    assert.equal(leader.stopped, 1);
    assert.equal(follower.stopped, 0, 'a replica that never led is not told it stopped');
  });

  it('hands a released Lease to the other replica without waiting for it to expire', async () => {
    const lease = newLeaseName();
    // A Lease far longer than the wait below: a takeover within it cannot have waited for the expiry.
    const timing = { leaseDurationSeconds: 30, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };
    const a = startReplica(lease, 'a', timing);
    const b = startReplica(lease, 'b', timing);
    const check = neverBothLead(a, b);
    const { leader, follower } = await leaderOf(a, b);
    const before = (await readLease(lease)).spec?.leaseTransitions ?? 0;

    await leader.elector.stop();
    assert.ok(!leader.elector.isLeader());
    assert.equal(leader.stopped, 1);
    assert.equal(await leaderStatus(leader, lease), '0');
    await until('the other replica takes the released lease', () => follower.elector.isLeader(), 10_000);
    await until('run() of the stopped leader resolves', () => leader.ran, 2000);

    const spec = (await readLease(lease)).spec;
    assert.equal(spec?.holderIdentity, follower.identity);
    assert.equal(spec?.leaseTransitions, before + 1, 'a change of holder is a transition');
    assert.equal(follower.started, 1);
    check.stop();
  });

  it('gives a crashed leader’s Lease to the other replica once it expired, never to both', async (t) => {
    const lease = newLeaseName();
    const a = startReplica(lease, 'a', FAST);
    const b = startReplica(lease, 'b', FAST);
    const check = neverBothLead(a, b);
    const { leader, follower } = await leaderOf(a, b);
    const before = (await readLease(lease)).spec?.leaseTransitions ?? 0;

    const crashedAt = Date.now();
    await leader.elector.stop({ release: false });
    assert.equal((await readLease(lease)).spec?.holderIdentity, leader.identity, 'a crashed leader does not release its lease');
    await until('the other replica takes the expired lease', () => follower.elector.isLeader(), 15_000);
    t.diagnostic(`taken over ${Date.now() - crashedAt} ms after the crash (lease duration ${FAST.leaseDurationSeconds} s)`);

    const spec = (await readLease(lease)).spec;
    assert.equal(spec?.holderIdentity, follower.identity);
    assert.equal(spec?.leaseTransitions, before + 1);
    assert.equal(leader.stopped, 1);
    const samples = check.stop();
    assert.ok(samples > 10, `sampled ${samples} moments`);
  });

  it('makes a leader cut off from the API server step down by its renew deadline, before the other takes over', async () => {
    const lease = newLeaseName();
    const partition = await kubeProxy(kc);
    try {
      const cutOff = startReplica(lease, 'cut-off', FAST, partition.config);
      await until('the replica behind the proxy leads', () => cutOff.elector.isLeader(), 15_000);
      const other = startReplica(lease, 'other', FAST);
      const check = neverBothLead(cutOff, other);
      await sleep(500);
      assert.ok(cutOff.elector.isLeader() && !other.elector.isLeader());

      partition.cut();
      await until('the cut-off leader steps down', () => cutOff.ran, 15_000);
      assert.ok(!cutOff.elector.isLeader());
      assert.equal(cutOff.stopped, 1);
      assert.equal(await leaderStatus(cutOff, lease), '0');
      await until('the other replica takes the expired lease', () => other.elector.isLeader(), 15_000);
      assert.equal((await readLease(lease)).spec?.holderIdentity, other.identity);
      check.stop();
    } finally {
      await partition.close();
    }
  });

  it('rejects timings under which two replicas could lead at once', () => {
    assert.throws(
      () => new LeaderElector({ kc, namespace, name: 'unused', identity: 'x', leaseDurationSeconds: 2, renewDeadlineSeconds: 2, retryPeriodSeconds: 1, log, onStartedLeading() {}, onStoppedLeading() {} }),
      { name: 'SvcError', code: 'VALIDATION', message: /leaseDurationSeconds \(2\) must be greater than renewDeadlineSeconds \(2\)/ },
    );
  });
});
