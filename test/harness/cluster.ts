/**
 * A real single-node Kubernetes cluster for tests: `test/infra/cluster.sh up` under a name of its own
 * (so it runs beside a developer's cluster or another run's), with svc's image built from the tree and
 * loaded; `stop()` is `cluster.sh down`. One cluster per suite, shared by its test files.
 *
 * Needs what `test/infra/provision.sh cluster` prints (SVC_KUBE_NODE_BIN, SVC_CLUSTER_IMAGES, …).
 * Env: `KUBECONFIG`, `SVC_IMAGE`, `SVC_IMAGE_REPOSITORY`, `SVC_IMAGE_TAG`, `KUBE_APISERVER_URL`,
 * `SVC_CLUSTER_NAME`, `SVC_CLUSTER_DIR`, `SVC_CLUSTER_NETNS`, `SVC_CLUSTER_NODE_IP`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Component } from './component.ts';

const SCRIPT = resolve(import.meta.dirname, '../infra/cluster.sh');
/** Cold, `up` also builds svc's image (a few minutes); warm it takes about a minute. */
const UP_TIMEOUT_MS = 15 * 60_000;
const DOWN_TIMEOUT_MS = 2 * 60_000;

/** Runs cluster.sh; its stderr (progress) goes to ours, its stdout is returned. */
function clusterSh(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [SCRIPT, ...args], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
      process.stderr.write(c);
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    const stdoutEnded = new Promise<void>((ended) => child.stdout.on('end', ended));
    child.on('error', fail);
    // On the script's exit, not on its pipes' close: a daemon it started that kept one of them open (an
    // inherited descriptor) would hold the run forever. What it printed is read to the end first.
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      void Promise.race([stdoutEnded, new Promise((r) => setTimeout(r, 5_000))]).then(() => {
        child.stderr.destroy();
        child.stdout.destroy();
        if (code === 0) done(out);
        else fail(new Error(`cluster.sh ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${err.trim().split('\n').slice(-5).join('\n')}`));
      });
    });
  });
}

export async function startCluster(): Promise<Component> {
  const name = `t${randomBytes(3).toString('hex')}`;
  const down = () => clusterSh(['down', '--name', name], DOWN_TIMEOUT_MS).then(() => undefined);
  let out: string;
  try {
    out = await clusterSh(['up', '--name', name], UP_TIMEOUT_MS);
  } catch (err) {
    await down().catch(() => undefined);
    throw err;
  }
  const env: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) env[m[1]!] = m[2]!;
  }
  return { name: 'cluster', env, stop: down };
}
