/**
 * `npm test`: typechecks, builds dist/ when a source changed since its last build, provisions the real
 * components the selected tests need (from the cache when warm), starts them on free loopback ports,
 * runs the tests with `node --test` (file lists passed explicitly), stops everything, and prints one
 * closing line `tests: N passed, N failed, N skipped`.
 *
 *   npm test                          every suite
 *   npm test -- test/server/x.test.ts only those files (their components are started as needed)
 *
 * `SVC_TEST_REQUIRE=all` (set by CI) makes a component that cannot be provisioned fail the run;
 * otherwise the suites needing it are skipped with one line saying what is missing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Component } from './harness/component.ts';

type ComponentName = 'postgres' | 'embedded-postgres' | 'opensearch' | 'kube' | 'helm' | 'datahub' | 'cluster';

interface Suite {
  name: string;
  files: string[];
  needs: ComponentName[];
  /** Environment of the suite's test processes, beside the components'. */
  env?: Record<string, string>;
  /** How many of its files run at once (see {@link CONCURRENCY}); 1 for files that share cluster-wide state. */
  concurrency?: number;
}

/**
 * Test files of a suite run side by side, each with a server and a database (or index prefix) of its
 * own: most of a test's time is spent waiting on a server, a database or a child process, so two cores
 * run several files at once. `SVC_TEST_CONCURRENCY` sets it (1 runs them one after another).
 */
const CONCURRENCY = Number(process.env.SVC_TEST_CONCURRENCY ?? 3);

/**
 * The behaviour tests of writes, run again under each way a write may get the state its rules check
 * (server/src/config.ts, writeStrategy): every one must give the same answers. The tests of one
 * mechanism (test/server/mechanisms: kept rows, checked statements, group commit) run with the default
 * only.
 */
const WRITE_BEHAVIOUR = ['test/server/structured-property-values.test.ts', 'test/server/structured-property-lifecycle.test.ts', 'test/server/structured-property-definitions.test.ts', 'test/server/concurrency.test.ts', 'test/server/seed-flows.test.ts'];
const WRITE_STRATEGIES: { name: string; env: Record<string, string> }[] = [
  { name: 'locked', env: { SVC_WRITE_STRATEGY: 'locked' } },
  { name: 'checked, read for each write', env: { SVC_WRITE_STATE_SOURCES: 'read' } },
];

const ROOT = resolve(import.meta.dirname, '..');
const PROVISIONED: Partial<Record<ComponentName, string>> = { postgres: 'postgres', opensearch: 'opensearch', kube: 'kube', helm: 'helm', datahub: 'datahub', cluster: 'cluster' };

function findTests(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.test.ts')) out.push(relative(ROOT, p));
    }
  };
  walk(join(ROOT, dir));
  return out.sort();
}

/** The components an infra smoke test needs, from its file name. */
function infraNeeds(file: string): ComponentName[] {
  if (/opensearch/.test(file)) return ['opensearch'];
  if (/kube|crds/.test(file)) return ['kube'];
  if (/helm/.test(file)) return ['helm'];
  if (/postgres/.test(file)) return ['postgres'];
  return [];
}

function suites(selected: string[] | undefined): Suite[] {
  const pick = (files: string[]) => (selected ? files.filter((f) => selected.includes(f)) : files);
  const unit = pick([...findTests('server'), ...findTests('operator')]);
  const server = pick(findTests('test/server'));
  const embedded = pick(findTests('test/embedded'));
  const search = pick(findTests('test/search'));
  const graphql = pick(findTests('test/graphql'));
  const cli = pick(findTests('test/cli'));
  const infra = pick(findTests('test/infra'));
  const operator = pick([...findTests('test/operator'), ...findTests('test/chart')]);
  const compat = pick(findTests('test/compat'));
  const cluster = pick(findTests('test/cluster'));
  const out: Suite[] = [];
  if (unit.length) out.push({ name: 'unit', files: unit, needs: [] });
  if (server.length) {
    out.push({ name: 'server on Debian Postgres 15', files: server, needs: ['postgres'] });
    out.push({ name: 'server on embedded Postgres', files: server, needs: ['embedded-postgres'] });
  }
  const writes = server.filter((f) => WRITE_BEHAVIOUR.includes(f));
  if (writes.length) for (const s of WRITE_STRATEGIES) out.push({ name: `writes ${s.name}, on Debian Postgres 15`, files: writes, needs: ['postgres'], env: s.env });
  // Search runs every case against both backends: Postgres (always there) and OpenSearch.
  // Two at a time: some of its files start OpenSearch nodes and server processes of their own.
  if (search.length) out.push({ name: 'search on Postgres and OpenSearch', files: search, needs: ['postgres', 'opensearch'], concurrency: 2 });
  // GraphQL's search cases run against both backends too.
  if (graphql.length) out.push({ name: 'graphql on Postgres and OpenSearch', files: graphql, needs: ['postgres', 'opensearch'] });
  // The svc binary, run as a child process against a started server.
  if (cli.length) out.push({ name: 'cli', files: cli, needs: ['postgres'] });
  // The operator against a real kube-apiserver and a real svc server (on Debian Postgres), and the Helm
  // chart rendered, validated by that API server, installed and upgraded on it (one start of each).
  // One after another: they share the API server's cluster-wide objects (CRDs, the chart's ClusterRoles).
  if (operator.length) out.push({ name: 'operator and chart', files: operator, needs: ['postgres', 'kube', 'helm'], concurrency: 1 });
  // DataHub's own CLI and SDK (acryl-datahub from PyPI) against svc, on both search backends.
  if (compat.length) out.push({ name: 'datahub client compatibility', files: compat, needs: ['postgres', 'opensearch', 'datahub'] });
  if (embedded.length) out.push({ name: 'embedded default', files: embedded, needs: [] });
  // The chart and the operator on a real single-node cluster (test/infra/cluster.sh: pods, Jobs, Services,
  // DNS, volumes), with the image built from the Dockerfile; one cluster for the suite's files.
  if (cluster.length) out.push({ name: 'chart on a cluster', files: cluster, needs: ['helm', 'cluster'] });
  const byNeeds = new Map<string, string[]>();
  for (const f of infra) {
    const key = infraNeeds(f).join(',');
    byNeeds.set(key, [...(byNeeds.get(key) ?? []), f]);
  }
  for (const [key, files] of byNeeds) out.push({ name: `infra ${key || 'plain'}`, files, needs: key ? (key.split(',') as ComponentName[]) : [] });
  return out;
}

/** Runs the provisioning script for the given components; returns the env it printed, or why it failed. */
function provision(names: string[]): { env: Record<string, string> } | { error: string } {
  const res = spawnSync('bash', [join(ROOT, 'test/infra/provision.sh'), ...names], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  process.stderr.write(res.stderr);
  if (res.status !== 0) {
    // The script's last line says what is missing (e.g. "provision: go not found on PATH …").
    const why = res.stderr.trim().split('\n').pop() ?? '';
    return { error: `provisioning ${names.join(', ')} failed (exit ${res.status}): ${why}` };
  }
  const env: Record<string, string> = {};
  for (const line of res.stdout.split('\n')) {
    const m = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (m) env[m[1]!] = m[2]!;
  }
  return { env };
}

/** Harness module and start function of each component (loaded only when a suite needs it). */
const STARTERS: Record<ComponentName, [module: string, fn: string]> = {
  postgres: ['./harness/postgres.ts', 'startDebianPostgres'],
  'embedded-postgres': ['./harness/postgres.ts', 'startEmbeddedTestPostgres'],
  opensearch: ['./harness/opensearch.ts', 'startOpenSearch'],
  kube: ['./harness/kube.ts', 'startKube'],
  helm: ['./harness/helm.ts', 'helmComponent'],
  datahub: ['./harness/datahub.ts', 'datahubComponent'],
  cluster: ['./harness/cluster.ts', 'startCluster'],
};

async function startComponent(name: ComponentName): Promise<Component> {
  const [modulePath, fn] = STARTERS[name];
  const mod = (await import(modulePath)) as Record<string, () => Promise<Component>>;
  return mod[fn]!();
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** A test or `describe` block running longer fails (a test may set a `timeout` of its own). */
const TEST_TIMEOUT_MS = 600_000;
/** A suite whose `node --test` has not ended by then is killed and counted as failed: a hang outside any test. */
const SUITE_TIMEOUT_MS = 40 * 60_000;

/** Sends `signal` to the `node --test` process and its file processes (a process group of their own). */
function signalTests(child: ReturnType<typeof spawn>, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Runs `node --test` on the files, echoing its TAP output and counting its summary lines. */
function runNodeTest(files: string[], env: Record<string, string>, concurrency: number): Promise<Counts> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', `--test-timeout=${TEST_TIMEOUT_MS}`, `--test-concurrency=${concurrency}`, ...files], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    testProcess = child;
    let timedOut = false;
    const watchdog = setTimeout(() => {
      timedOut = true;
      process.stdout.write(`\n# the suite did not end within ${SUITE_TIMEOUT_MS / 60_000} min: its test processes are killed\n`);
      signalTests(child, 'SIGKILL');
    }, SUITE_TIMEOUT_MS);
    const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      process.stdout.write(chunk);
      buffer += chunk;
    });
    child.on('close', (code) => {
      const num = (label: string) => Number(buffer.match(new RegExp(`^# ${label} (\\d+)$`, 'm'))?.[1] ?? 0);
      counts.passed = num('pass');
      counts.failed = num('fail') + num('cancelled');
      counts.skipped = num('skipped') + num('todo');
      clearTimeout(watchdog);
      if ((code !== 0 || timedOut) && counts.failed === 0) counts.failed = 1; // a crash or hang outside any test
      done(counts);
    });
  });
}

/** Components running now: stopped on the way out, also when the run is interrupted (Ctrl-C, a CI timeout). */
const running = new Set<Component>();
/** The `node --test` process of the current suite. */
let testProcess: ReturnType<typeof spawn> | undefined;
let stopping: Promise<void> | undefined;

/** Stops every running component, once even when called again meanwhile (interrupt during a suite's end). */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const c of [...running].reverse()) {
      await c.stop().catch((e: unknown) => process.stdout.write(`# stopping ${c.name} failed: ${String(e)}\n`));
      running.delete(c);
    }
  })().finally(() => {
    stopping = undefined;
  });
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stdout.write(`\n# ${signal}: stopping the tests and the components\n`);
    if (testProcess) signalTests(testProcess, 'SIGTERM');
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2).map((a) => relative(ROOT, resolve(a)));
  const require = process.env.SVC_TEST_REQUIRE === 'all';
  const total: Counts = { passed: 0, failed: 0, skipped: 0 };

  process.stdout.write('# typecheck (tsc --noEmit)\n');
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
  if (tsc.status !== 0) {
    process.stdout.write('typecheck failed\n');
    return 1;
  }
  // What users run is dist/ (npm start, the svc and svc-operator commands, the image): the tests that
  // run those run the build of the sources under test.
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/build.mjs'), '--if-stale'], { stdio: 'inherit' });
  if (build.status !== 0) {
    process.stdout.write('build failed\n');
    return 1;
  }

  const plan = suites(args.length ? args : undefined);
  const toProvision = [...new Set(plan.flatMap((s) => s.needs.map((n) => PROVISIONED[n]).filter((x): x is string => !!x)))];
  const provisionedEnv: Record<string, string> = {};
  const unavailable = new Map<string, string>();
  for (const name of toProvision) {
    const res = provision([name]);
    if ('error' in res) unavailable.set(name, res.error);
    else Object.assign(provisionedEnv, res.env);
  }
  Object.assign(process.env, provisionedEnv);

  for (const suite of plan) {
    const missing = suite.needs.filter((n) => unavailable.has(PROVISIONED[n] ?? ''));
    if (missing.length) {
      const why = missing.map((n) => unavailable.get(PROVISIONED[n]!)).join('; ');
      if (require) {
        process.stdout.write(`# suite "${suite.name}" FAILED: ${why} (SVC_TEST_REQUIRE=all)\n`);
        total.failed += suite.files.length;
        continue;
      }
      process.stdout.write(`# suite "${suite.name}" skipped: ${why}\n`);
      total.skipped += suite.files.length;
      continue;
    }
    process.stdout.write(`\n# suite "${suite.name}": ${suite.files.length} file(s)\n`);
    try {
      const env: Record<string, string> = { ...suite.env };
      for (const n of suite.needs) {
        const c = await startComponent(n);
        running.add(c);
        Object.assign(env, c.env);
      }
      const counts = await runNodeTest(suite.files, env, Math.min(suite.concurrency ?? CONCURRENCY, CONCURRENCY));
      total.passed += counts.passed;
      total.failed += counts.failed;
      total.skipped += counts.skipped;
    } catch (err) {
      process.stdout.write(`# suite "${suite.name}" could not start its components: ${(err as Error).stack ?? String(err)}\n`);
      total.failed += 1;
    } finally {
      await stopAll();
    }
  }
  process.stdout.write(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
  return total.failed > 0 || total.passed === 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
