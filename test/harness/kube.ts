/**
 * A real Kubernetes API server for tests, envtest style: etcd plus kube-apiserver and nothing else
 * (no controller-manager, scheduler or kubelet). Certificates are made with openssl for each start;
 * the admin client certificate is in `system:masters`. Everything lives in one tmpfs folder that
 * `stop()` removes.
 *
 * Needs `SVC_KUBE_APISERVER` and `SVC_ETCD` (printed by `test/infra/provision.sh kube`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Component, freePort, killOnExit, requiredEnv, stopProcess, waitWhileRunning } from './component.ts';

const START_TIMEOUT_MS = 90_000;

/** Starts etcd and kube-apiserver and waits until `/readyz` passes. Env: `KUBECONFIG`, `KUBE_APISERVER_URL`. */
export async function startKube(): Promise<Component> {
  const apiserverBin = requiredEnv('SVC_KUBE_APISERVER');
  const etcdBin = requiredEnv('SVC_ETCD');
  const root = mkdtempSync(join(process.env.SVC_TEST_TMP ?? tmpfsOrTmp(), 'svc-kube-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopProcess(child, 15_000);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const certs = makeCertificates(join(root, 'pki'));
    const etcd = await startEtcd(etcdBin, root);
    children.push(etcd.child);
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const log = join(root, 'kube-apiserver.log');
    const apiserver = spawnLogged(log, apiserverBin, [
      `--etcd-servers=${etcd.url}`,
      `--cert-dir=${join(root, 'pki')}`,
      `--tls-cert-file=${certs.servingCert}`,
      `--tls-private-key-file=${certs.servingKey}`,
      `--client-ca-file=${certs.caCert}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--authorization-mode=RBAC',
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${certs.serviceAccountPublic}`,
      `--service-account-signing-key-file=${certs.serviceAccountKey}`,
      '--v=1',
    ]);
    children.push(apiserver);

    const kubeconfig = join(root, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml(url, certs), { mode: 0o600 });
    const tls = {
      ca: readFileSync(certs.caCert),
      cert: readFileSync(certs.adminCert),
      key: readFileSync(certs.adminKey),
    };
    await waitWhileRunning(
      apiserver,
      'kube-apiserver /readyz',
      async () => (await httpsGet(`${url}/readyz`, tls)) === 200,
      START_TIMEOUT_MS,
      log,
    );
    // The API server creates the default namespaces itself shortly after it is ready; tests use them.
    await waitWhileRunning(
      apiserver,
      'the default namespace',
      async () => (await httpsGet(`${url}/api/v1/namespaces/default`, tls)) === 200,
      START_TIMEOUT_MS,
      log,
    );
    return { name: 'kube', env: { KUBECONFIG: kubeconfig, KUBE_APISERVER_URL: url }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function tmpfsOrTmp(): string {
  try {
    mkdirSync('/dev/shm', { recursive: true });
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** Spawns a server with stdout and stderr going to a log file (a pipe nobody reads would block it). */
function spawnLogged(log: string, cmd: string, args: string[]): ChildProcess {
  const fd = openSync(log, 'a');
  const child = spawn(cmd, args, {
    stdio: ['ignore', fd, fd],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
  });
  closeSync(fd);
  return killOnExit(child);
}

async function startEtcd(bin: string, root: string): Promise<{ child: ChildProcess; url: string }> {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const log = join(root, 'etcd.log');
  // Its data sits on tmpfs, which makes fsync cheap (etcd 3.4 has no --unsafe-no-fsync).
  const child = spawnLogged(log, bin, [
    '--name=default',
    `--data-dir=${join(root, 'etcd')}`,
    `--listen-client-urls=${url}`,
    `--advertise-client-urls=${url}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    '--logger=zap',
    '--log-outputs=stderr',
    '--log-level=warn',
  ]);
  await waitWhileRunning(
    child,
    'etcd /health',
    async () => {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    30_000,
    log,
  );
  return { child, url };
}

interface Certificates {
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPublic: string;
}

/** A throwaway CA, a serving certificate for 127.0.0.1, an admin client certificate and the service-account key pair. */
function makeCertificates(dir: string): Certificates {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=svc-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  );
  const sign = (name: string, subject: string, extensions: string) => {
    openssl('req', '-new', ...ec, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', subject);
    writeFileSync(path(`${name}.ext`), extensions);
    openssl(
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.crt'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      path(`${name}.crt`),
      '-extfile',
      path(`${name}.ext`),
    );
  };
  sign(
    'serving',
    '/CN=kube-apiserver',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
      '',
    ].join('\n'),
  );
  sign(
    'admin',
    '/O=system:masters/CN=svc-test-admin',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
      '',
    ].join('\n'),
  );
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', path('sa.key'));
  openssl('pkey', '-in', path('sa.key'), '-pubout', '-out', path('sa.pub'));
  return {
    caCert: path('ca.crt'),
    servingCert: path('serving.crt'),
    servingKey: path('serving.key'),
    adminCert: path('admin.crt'),
    adminKey: path('admin.key'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPublic: path('sa.pub'),
  };
}

function kubeconfigYaml(url: string, certs: Certificates): string {
  const b64 = (file: string) => readFileSync(file).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
- name: svc-test
  cluster:
    server: ${url}
    certificate-authority-data: ${b64(certs.caCert)}
users:
- name: svc-test-admin
  user:
    client-certificate-data: ${b64(certs.adminCert)}
    client-key-data: ${b64(certs.adminKey)}
contexts:
- name: svc-test
  context:
    cluster: svc-test
    user: svc-test-admin
    namespace: default
current-context: svc-test
`;
}

/** GETs a URL with the admin client certificate; resolves to the HTTP status. */
function httpsGet(url: string, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...tls, method: 'GET', timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
